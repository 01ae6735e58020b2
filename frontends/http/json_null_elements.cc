#include "frontends/http/json_null_elements.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/excerpt.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

// Whether a list under `value` holds a null; if so, `path` is that element's path below `value`
// (".texts[1]", "[0]"), built only once one is found.
bool FindNullElement(const nlohmann::json& value, std::string& path) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      if (FindNullElement(member, path)) {
        path = absl::StrCat(".", Excerpt(key), path);  // A key is the client's: quoted short.
        return true;
      }
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if (value[i].is_null() || FindNullElement(value[i], path)) {
        path = absl::StrCat("[", i, "]", value[i].is_null() ? "" : path);
        return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::Status RefuseNullElements(const nlohmann::json& value, absl::string_view what) {
  std::string path;
  if (!FindNullElement(value, path)) return absl::OkStatus();
  if (absl::StartsWith(path, ".")) path.erase(0, 1);
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": ", Excerpt(path, 200), " is null (a list holds values, not null)"));
}

}  // namespace mtserve
