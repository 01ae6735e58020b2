#include "base/repeated_flag_values.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace mtserve {

std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& flag) {
  std::vector<std::string> values;
  auto add = [&](const std::string& value) {
    for (absl::string_view part : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      values.emplace_back(part);
    }
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;
    for (const std::string& prefix : {"--" + flag, "-" + flag}) {
      if (arg == prefix && i + 1 < argc) {
        add(argv[++i]);
      } else if (absl::StartsWith(arg, prefix + "=")) {
        add(arg.substr(prefix.size() + 1));
      }
    }
  }
  return values;
}

}  // namespace mtserve
