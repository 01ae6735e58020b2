#include "base/env_flags.h"

#include <algorithm>
#include <cstdlib>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace mtserve {

std::vector<std::string> FlagsDefinedIn(const std::string& file) {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    // Abseil reports the file name normalized (e.g. without the leading "/"): a path suffix.
    const std::string defined_in = flag->Filename();
    if (file == defined_in || absl::EndsWith(file, "/" + defined_in)) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string FlagVariable(const std::string& prefix, const std::string& name) {
  return prefix + absl::AsciiStrToUpper(name);
}

absl::Status SetFlagsFromEnvironment(const std::string& prefix,
                                     const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    const std::string variable = FlagVariable(prefix, name);
    const char* value = std::getenv(variable.c_str());
    if (value == nullptr) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) return absl::InternalError(absl::StrCat("no flag --", name));
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat(variable, "=", value, ": not a valid --", name, ": ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace mtserve
