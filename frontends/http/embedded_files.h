// Files compiled into the binary at build time (frontends/http/embed_files.cmake; the list is in
// frontends/http/CMakeLists.txt): the OpenAPI description (openapi.json) and the translation page
// (web/), so that a binary always serves the description and page of the API it has, with nothing
// to install beside it.
#ifndef MTSERVE_FRONTENDS_HTTP_EMBEDDED_FILES_H_
#define MTSERVE_FRONTENDS_HTTP_EMBEDDED_FILES_H_

#include "absl/strings/string_view.h"

namespace mtserve {

// The text of the file `name` (its path under frontends/http/, e.g. "web/app.js"), or "" if none.
absl::string_view EmbeddedFile(absl::string_view name);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_EMBEDDED_FILES_H_
