// Null inside a JSON list, found before protobuf's JSON parser sees it: that parser drops a null
// element of a repeated field without a word ({"texts": ["a", null]} became one text), so a
// request would be answered with fewer translations than it sent texts. A null field, as opposed
// to an element, is the field's default in proto3's JSON mapping and stays allowed.
#ifndef MTSERVE_FRONTENDS_HTTP_JSON_NULL_ELEMENTS_H_
#define MTSERVE_FRONTENDS_HTTP_JSON_NULL_ELEMENTS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace mtserve {

// INVALID_ARGUMENT naming `what` and the first null element's path ("the request body: texts[1]
// is null"), or OK. `value` is a parsed tree, so its depth is bounded already.
absl::Status RefuseNullElements(const nlohmann::json& value, absl::string_view what);

}  // namespace mtserve

#endif  // MTSERVE_FRONTENDS_HTTP_JSON_NULL_ELEMENTS_H_
