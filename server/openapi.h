// The OpenAPI description of the HTTP API (server/openapi.json), compiled into the binary at build
// time (server/embed_openapi.cmake): what GET /openapi.json answers is always the description of
// the API this binary serves, with no file to install beside it.
#ifndef MTSERVE_SERVER_OPENAPI_H_
#define MTSERVE_SERVER_OPENAPI_H_

#include "absl/strings/string_view.h"

namespace mtserve {

// The description, JSON (checked at build time).
absl::string_view OpenApiJson();

}  // namespace mtserve

#endif  // MTSERVE_SERVER_OPENAPI_H_
