// Route paths with a model's name in them (route_path.h).
#include "frontends/http/route_path.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/excerpt.h"

namespace mtserve {
namespace {

int HexDigit(char c) {
  return absl::ascii_isdigit(static_cast<unsigned char>(c))
             ? c - '0'
             : absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

}  // namespace

bool RoutePathMatches(absl::string_view pattern, absl::string_view path) {
  const size_t hole = pattern.find(kRouteName);
  if (hole == absl::string_view::npos) return path == pattern;
  return absl::ConsumePrefix(&path, pattern.substr(0, hole)) &&
         absl::ConsumeSuffix(&path, pattern.substr(hole + kRouteName.size())) && !path.empty() &&
         path.find('/') == absl::string_view::npos;
}

absl::StatusOr<std::string> RoutePathName(absl::string_view pattern, absl::string_view path) {
  const size_t hole = pattern.find(kRouteName);
  const absl::string_view encoded =
      path.substr(hole, path.size() - (pattern.size() - kRouteName.size()));
  std::string name;
  for (size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      name += encoded[i];
      continue;
    }
    const absl::string_view hex = encoded.substr(i + 1, 2);
    if (hex.size() != 2 || !absl::ascii_isxdigit(static_cast<unsigned char>(hex[0])) ||
        !absl::ascii_isxdigit(static_cast<unsigned char>(hex[1]))) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model's name in the path, \"", Excerpt(encoded),
                       "\", has a % not followed by two hex digits (percent-encoding)"));
    }
    name += static_cast<char>(HexDigit(hex[0]) * 16 + HexDigit(hex[1]));
    i += 2;
  }
  return name;
}

}  // namespace mtserve
