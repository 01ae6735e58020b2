// A file sent to translate as a multipart/form-data body (multipart_form.h), read into the file
// job it asks for (serving/file_jobs.h's FileRequest): the native POST /v1/translate_file's form
// (parts file, model, source_language, target_language, format, options) and LibreTranslate's
// POST /translate_file (file, source, target, api_key); and the Content-Disposition the
// translated file is sent back with. Pure, over untrusted bytes (fuzzed in
// tests/fuzz/file_upload_fuzzer.cc).
#ifndef MTSERVE_FRONTENDS_HTTP_FILE_UPLOAD_H_
#define MTSERVE_FRONTENDS_HTTP_FILE_UPLOAD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/json_file.h"
#include "serving/file_jobs.h"

namespace mtserve {

// What the form's parts other than the file may take: the body's bytes besides the file's
// (field parts, part headers, delimiters). The transport's limit on a file's body is the file's
// limit plus this.
inline constexpr int64_t kFileFormOverheadBytes = 64 << 10;

// The form of `body` (of Content-Type `content_type`) as a FileRequest, its translation's model,
// languages and options from the form (`bounds` bound the options' JSON), its API key and deadline
// left to the caller. The body is at most `max_body_bytes`. INVALID_ARGUMENT naming the part and
// the flaw: not multipart/form-data, a malformed form, no part `file`, a part given twice, a part
// the route does not take (the message lists those it does), options that are not a
// DecodingOptions. The file's size and format are FileJobs::Submit's to check.
absl::StatusOr<FileRequest> ParseFileUpload(absl::string_view body, absl::string_view content_type,
                                            int64_t max_body_bytes, const ValueBounds& bounds);

// LibreTranslate's form: the file, `source` (a language or "auto") and `target`, and `api_key`
// (set in the translation's api_key if given); other parts are ignored, as LibreTranslate does.
// INVALID_ARGUMENT as LibreTranslate words it ("Invalid request: missing file parameter").
absl::StatusOr<FileRequest> ParseLibreTranslateFileUpload(absl::string_view body,
                                                          absl::string_view content_type,
                                                          int64_t max_body_bytes);

// `Content-Disposition: attachment` for a file named `file_name` (RFC 6266): filename="..." with
// an ASCII stand-in (each byte outside printable ASCII, '"', '\\', '/' and '%' an '_') for old
// clients, and filename*=UTF-8''... (RFC 8187's percent-encoding of its UTF-8 bytes), which
// clients that know it prefer.
std::string AttachmentDisposition(absl::string_view file_name);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_FILE_UPLOAD_H_
