#include "server/model_specs.h"

#include <filesystem>
#include <set>

#include "absl/strings/str_cat.h"

namespace mtserve {

bool AbslParseFlag(absl::string_view text, ComputeTypeFlag* flag, std::string* error) {
  const absl::StatusOr<ComputeType> type = ParseComputeType(text);
  if (!type.ok()) {
    *error = std::string(type.status().message());
    return false;
  }
  flag->name = std::string(text);
  return true;
}

std::string AbslUnparseFlag(const ComputeTypeFlag& flag) { return flag.name; }

absl::StatusOr<std::vector<ModelSpec>> ParseModelSpecs(const std::vector<std::string>& values,
                                                       const std::string& default_dir) {
  std::vector<ModelSpec> specs;
  std::set<std::string> names;
  for (const std::string& value : values.empty() ? std::vector<std::string>{default_dir} : values) {
    ModelSpec spec;
    const size_t equals = value.find('=');
    const size_t dir_start = equals == std::string::npos ? 0 : equals + 1;
    size_t dir_end = value.size();
    // The last "@" of the directory part starts the type. A directory with an "@" in its name
    // then needs its type written out, which beats taking a mistyped type for part of a
    // directory and failing later on a directory that does not exist.
    if (const size_t at = value.rfind('@'); at != std::string::npos && at >= dir_start) {
      const absl::StatusOr<ComputeType> type = ParseComputeType(value.substr(at + 1));
      if (!type.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--model=", value, ": ",
                                                       type.status().message(),
                                                       " (expected NAME=DIR@TYPE or DIR@TYPE)"));
      }
      spec.compute_type = *type;
      dir_end = at;
    }
    spec.dir = value.substr(dir_start, dir_end - dir_start);
    if (equals == std::string::npos) {
      spec.name = std::filesystem::path(spec.dir).lexically_normal().filename().string();
      if (spec.name.empty()) {  // "dir/" has an empty filename.
        spec.name = std::filesystem::path(spec.dir).lexically_normal().parent_path().filename();
      }
    } else {
      spec.name = value.substr(0, equals);
    }
    if (spec.name.empty() || spec.dir.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model=", value, ": expected NAME=DIR or DIR, optionally with @TYPE"));
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
