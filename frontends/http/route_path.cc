// Route paths with values in them (route_path.h).
#include "frontends/http/route_path.h"

#include <optional>
#include <utility>
#include <vector>

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

// Each hole of `pattern` ("{id}") with its bytes in `path`, in order, if `path` is `pattern`'s.
using Holes = std::vector<std::pair<absl::string_view, absl::string_view>>;
std::optional<Holes> MatchHoles(absl::string_view pattern, absl::string_view path) {
  Holes holes;
  while (true) {
    const size_t open = pattern.find('{');
    if (open == absl::string_view::npos) {
      if (path != pattern) return std::nullopt;
      return holes;
    }
    const size_t close = pattern.find('}', open);
    if (close == absl::string_view::npos) return std::nullopt;  // Not a pattern.
    if (!absl::ConsumePrefix(&path, pattern.substr(0, open))) return std::nullopt;
    const absl::string_view hole = pattern.substr(open, close + 1 - open);
    pattern.remove_prefix(close + 1);
    // The last hole ends where the pattern's rest begins at the path's end; another, at '/'.
    size_t end;
    if (pattern.find('{') == absl::string_view::npos) {
      if (!absl::EndsWith(path, pattern)) return std::nullopt;
      end = path.size() - pattern.size();
    } else {
      end = std::min(path.find('/'), path.size());
    }
    const absl::string_view value = path.substr(0, end);
    if (value.empty() || value.find('/') != absl::string_view::npos) return std::nullopt;
    holes.emplace_back(hole, value);
    path.remove_prefix(end);
  }
}

}  // namespace

bool RoutePathMatches(absl::string_view pattern, absl::string_view path) {
  return MatchHoles(pattern, path).has_value();
}

absl::StatusOr<std::string> RoutePathName(absl::string_view pattern, absl::string_view path,
                                          absl::string_view hole) {
  const std::optional<Holes> holes = MatchHoles(pattern, path);
  absl::string_view encoded;
  bool found = false;
  for (const auto& [name, value] : holes.value_or(Holes{})) {
    if (name != hole) continue;
    encoded = value;
    found = true;
  }
  if (!found) {
    return absl::InvalidArgumentError(
        absl::StrCat("the path \"", Excerpt(path), "\" has no ", hole, " of ", pattern));
  }
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
          absl::StrCat("the path's ", hole, ", \"", Excerpt(encoded),
                       "\", has a % not followed by two hex digits (percent-encoding)"));
    }
    name += static_cast<char>(HexDigit(hex[0]) * 16 + HexDigit(hex[1]));
    i += 2;
  }
  return name;
}

}  // namespace mtserve
