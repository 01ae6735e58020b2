#include "server/model_specs.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/json_file.h"
#include "base/status_macros.h"

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

absl::Status CheckModelName(const std::string& name, const std::string& where) {
  // The metrics label requests that chose no model (an unknown name, a bad message) with
  // model="none", and those whose texts went to several models with model="several": a model of
  // either name would be counted with them.
  if (name == "none" || name == "several") {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the name \"", name,
        "\" is reserved (a metrics model label of requests that chose no model or several); "
        "name the model otherwise"));
  }
  return absl::OkStatus();
}

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
    MT_RETURN_IF_ERROR(CheckModelName(spec.name, absl::StrCat("--model=", value)));
    if (!names.insert(spec.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--model: the name \"", spec.name, "\" is given twice"));
    }
    specs.push_back(spec);
  }
  return specs;
}

namespace {

// InvalidArgument naming `path`, which cannot be examined (a symbolic link loop, a folder without
// permission): std::filesystem's non-throwing forms are used throughout, so that such an entry in
// a --model_dir is an error, not an exception that ends the process.
absl::Status Unreadable(const std::filesystem::path& path, const std::error_code& error) {
  return absl::InvalidArgumentError(
      absl::StrCat(path.string(), ": cannot be read: ", error.message()));
}

// Whether `path` exists.
absl::StatusOr<bool> Exists(const std::filesystem::path& path) {
  std::error_code error;
  const bool exists = std::filesystem::exists(path, error);
  if (error) return Unreadable(path, error);
  return exists;
}

// Whether the vocabulary file `path` holds a target-language token (">>deu<<"): the mark of a
// multi-target OPUS-MT checkpoint. Reads the file as text: each token is a JSON key.
absl::StatusOr<bool> HasTargetLanguageTokens(const std::filesystem::path& path) {
  MT_ASSIGN_OR_RETURN(const std::string text, ReadRegularFile(path.string(), size_t{256} << 20));
  for (size_t at = text.find("\">>"); at != std::string::npos; at = text.find("\">>", at + 1)) {
    size_t end = at + 3;
    while (end < text.size() && (absl::ascii_isalnum(text[end]) || text[end] == '_')) ++end;
    if (end > at + 3 && text.compare(end, 3, "<<\"") == 0) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ModelFolders(const std::string& dir) {
  std::error_code error;
  std::vector<std::string> folders;
  for (std::filesystem::directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    const std::filesystem::path& path = it->path();
    if (path.filename().string().starts_with(".")) continue;
    std::error_code entry_error;
    const bool is_directory = it->is_directory(entry_error);
    if (entry_error) return Unreadable(path, entry_error);
    if (!is_directory) continue;
    MT_ASSIGN_OR_RETURN(const bool has_config, Exists(path / "config.json"));
    if (has_config) folders.push_back(path.string());
  }
  if (error) return Unreadable("--model_dir=" + dir, error);
  std::sort(folders.begin(), folders.end());
  return folders;
}

absl::StatusOr<std::vector<ModelSpec>> ScanModelDirectory(const std::string& dir) {
  MT_ASSIGN_OR_RETURN(const std::vector<std::string> folders, ModelFolders(dir));
  std::vector<ModelSpec> specs;
  for (const std::string& folder : folders) {
    MT_ASSIGN_OR_RETURN(ModelSpec spec, ScanModelFolder(dir, folder));
    specs.push_back(std::move(spec));
  }
  return specs;
}

absl::StatusOr<ModelSpec> ScanModelFolder(const std::string& dir, const std::string& folder_name) {
  const std::filesystem::path folder(folder_name);
  ModelSpec spec;
  spec.on_demand = true;
  spec.model_dir = dir;
  spec.dir = folder.string();
  spec.name = folder.filename().string();
  const std::filesystem::path settings = folder / "mtserve.json";
  MT_ASSIGN_OR_RETURN(const bool has_settings, Exists(settings));
  if (has_settings) {
    MT_ASSIGN_OR_RETURN(const std::string text, ReadRegularFile(settings.string(), 4096));
    MT_ASSIGN_OR_RETURN(const nlohmann::json json, ParseJson(text, settings.string()));
    if (!json.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(settings.string(), ": expected an object of \"name\" and \"compute_type\""));
    }
    for (const auto& [key, value] : json.items()) {
      if ((key != "name" && key != "compute_type") || !value.is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(
            settings.string(), ": \"", key,
            "\" is not a string setting here; expected \"name\" and \"compute_type\""));
      }
    }
    if (json.contains("name")) spec.name = json["name"].get<std::string>();
    if (json.contains("compute_type")) {
      absl::StatusOr<ComputeType> type = ParseComputeType(json["compute_type"].get<std::string>());
      if (!type.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(settings.string(), ": compute_type: ", type.status().message()));
      }
      spec.compute_type = *type;
    }
  }
  if (spec.name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(settings.string(), ": name is empty"));
  }
  MT_RETURN_IF_ERROR(CheckModelName(spec.name, spec.dir));
  // A checkpoint without its vocabulary is refused when it loads, naming the file.
  const std::filesystem::path vocab = folder / "vocab.json";
  MT_ASSIGN_OR_RETURN(const bool has_vocab, Exists(vocab));
  bool multi_target = false;
  if (has_vocab) {
    MT_ASSIGN_OR_RETURN(multi_target, HasTargetLanguageTokens(vocab));
  }
  if (multi_target) {
    return absl::InvalidArgumentError(absl::StrCat(
        spec.dir,
        ": a multi-target checkpoint (its vocabulary has target-language tokens such as "
        ">>deu<<); mtserve serves checkpoints of one target language: remove it from the "
        "directory"));
  }
  return spec;
}

absl::StatusOr<std::vector<ModelSpec>> JoinModelSpecs(std::vector<ModelSpec> specs,
                                                      const std::vector<std::string>& dirs) {
  std::map<std::string, std::string> where;
  for (const ModelSpec& spec : specs) where[spec.name] = spec.dir;
  for (const std::string& dir : dirs) {
    MT_ASSIGN_OR_RETURN(std::vector<ModelSpec> found, ScanModelDirectory(dir));
    for (ModelSpec& spec : found) {
      auto [it, added] = where.emplace(spec.name, spec.dir);
      if (!added) {
        return absl::InvalidArgumentError(absl::StrCat("two models are named \"", spec.name,
                                                       "\": ", it->second, " and ", spec.dir));
      }
      specs.push_back(std::move(spec));
    }
  }
  return specs;
}

}  // namespace mtserve
