#include "server/model_specs.h"

#include <filesystem>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

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

absl::StatusOr<std::vector<ModelSpec>> ParseModelSpecs(const std::vector<std::string>& values,
                                                       const std::string& default_dir) {
  std::vector<ModelSpec> specs;
  std::set<std::string> names;
  for (const std::string& value : values.empty() ? std::vector<std::string>{default_dir} : values) {
    ModelSpec spec;
    const size_t equals = value.find('=');
    if (equals == std::string::npos) {
      spec.dir = value;
      spec.name = std::filesystem::path(value).lexically_normal().filename().string();
      if (spec.name.empty()) {  // "dir/" has an empty filename.
        spec.name = std::filesystem::path(value).lexically_normal().parent_path().filename();
      }
    } else {
      spec.name = value.substr(0, equals);
      spec.dir = value.substr(equals + 1);
    }
    if (spec.name.empty() || spec.dir.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model=", value, ": expected NAME=DIR or DIR"));
    }
    // The metrics label requests that chose no model (an unknown name, a bad message) with
    // model="none": a model of that name would be counted with them.
    if (spec.name == "none") {
      return absl::InvalidArgumentError(
          absl::StrCat("--model=", value,
                       ": the name \"none\" is reserved (the metrics' model label of "
                       "requests that named no served model); name the model NAME=DIR"));
    }
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model: the name \"", spec.name, "\" is given twice"));
    }
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace mtserve
