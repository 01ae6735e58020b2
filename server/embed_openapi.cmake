# Writes OUTPUT, a C++ file defining mtserve::OpenApiJson() as the text of INPUT
# (server/openapi.json). Run at build time (cmake -P), so that editing the description rebuilds
# the binary with it; a description that is not JSON fails the build rather than reaching clients.
file(READ "${INPUT}" content)
string(JSON type ERROR_VARIABLE json_error TYPE "${content}")
if(json_error)
  message(FATAL_ERROR "${INPUT} is not valid JSON: ${json_error}")
endif()
if(NOT type STREQUAL "OBJECT")
  message(FATAL_ERROR "${INPUT} is not a JSON object")
endif()
# The text goes into a raw string literal, which this sequence would end early.
set(delimiter "openapi_json")
string(FIND "${content}" ")${delimiter}\"" end_found)
if(NOT end_found EQUAL -1)
  message(FATAL_ERROR "${INPUT} holds )${delimiter}\", which would end its raw string literal")
endif()
file(WRITE "${OUTPUT}" "// Generated from server/openapi.json by server/embed_openapi.cmake; edit that.
#include \"server/openapi.h\"

namespace mtserve {

absl::string_view OpenApiJson() {
  static constexpr char kText[] = R\"${delimiter}(${content})${delimiter}\";
  return absl::string_view(kText, sizeof(kText) - 1);
}

}  // namespace mtserve
")
