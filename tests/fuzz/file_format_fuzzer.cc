// A file's format as the file API will tell it (text/file_format.h): the input's first line is
// the file's name, its second the media type, the rest its content (a zip archive's opened as an
// office package). Any bytes give a format name
// or an INVALID_ARGUMENT, never a crash; and the content decides: the format found with the
// claims is the one the content alone gives, or the one claimed where the content shows nothing
// more specific, and claiming the format found always agrees.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tests/test_lib/fuzz_check.h"
#include "text/file_format.h"

namespace {

bool IsFormatName(absl::string_view name) {
  for (const absl::string_view known :
       {"text", "html", "markdown", "srt", "vtt", "docx", "pptx", "odt", "odp", "epub"}) {
    if (name == known) return true;
  }
  return false;
}

absl::string_view TakeLine(absl::string_view& input) {
  const size_t newline = input.find('\n');
  const absl::string_view line = input.substr(0, newline);
  input.remove_prefix(newline == absl::string_view::npos ? input.size() : newline + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view input(reinterpret_cast<const char*>(data), size);
  const absl::string_view file_name = TakeLine(input);
  const absl::string_view media_type = TakeLine(input);
  const absl::string_view content = input;

  const absl::StatusOr<std::string> alone = mtserve::DetectFileFormat({}, content);
  if (alone.ok()) {
    FUZZ_CHECK(IsFormatName(*alone) && *alone != "markdown");
    // Claiming what the content shows is never contradicted.
    const absl::StatusOr<std::string> claimed =
        mtserve::DetectFileFormat({.format = *alone}, content);
    FUZZ_CHECK(claimed.ok() && *claimed == *alone);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(alone.status()));
  }
  const absl::StatusOr<std::string> format =
      mtserve::DetectFileFormat({.file_name = file_name, .media_type = media_type}, content);
  if (!format.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(format.status()));
    return 0;
  }
  FUZZ_CHECK(IsFormatName(*format));
  FUZZ_CHECK(alone.ok());  // Content refused alone is refused whatever is claimed.
  // Subtitles and office documents are decided by the content alone; other content yields only
  // to a specific claim.
  auto by_content = [](absl::string_view format) {
    return format == "srt" || format == "vtt" || format == "docx" || format == "pptx" ||
           format == "odt" || format == "odp" || format == "epub";
  };
  if (by_content(*alone)) FUZZ_CHECK(*format == *alone);
  if (by_content(*format)) FUZZ_CHECK(*format == *alone);
  return 0;
}
