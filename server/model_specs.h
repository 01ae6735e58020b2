// The --model and --compute_type flags: which checkpoints to serve, under which names, and in
// which arithmetic.
#ifndef MTSERVE_SERVER_MODEL_SPECS_H_
#define MTSERVE_SERVER_MODEL_SPECS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/compute_type.h"

namespace mtserve {

struct ModelSpec {
  std::string name;
  std::string dir;
  // From "@TYPE" ("auto" already resolved for this CPU); none: --compute_type's.
  std::optional<ComputeType> compute_type;
  // Loaded when a request first needs it (a --model_dir model not in --preload), not at start.
  bool on_demand = false;
  // The --model_dir it was found in, as given (re-read while serving: model_dir_rescan.h); empty
  // for a --model model.
  std::string model_dir;
};

// --compute_type as absl flags hold it: the name given ("auto" stays "auto", so that --help
// shows what was asked for), checked when parsed so that a bad value, from the command line or
// MTSERVE_COMPUTE_TYPE, is refused naming where it came from.
struct ComputeTypeFlag {
  std::string name = "float32";
};
bool AbslParseFlag(absl::string_view text, ComputeTypeFlag* flag, std::string* error);
std::string AbslUnparseFlag(const ComputeTypeFlag& flag);

// Whether `name` may name a model: not empty, and not one of the metrics' reserved model labels
// ("none": requests that chose no model; "several": requests routed to several models).
// InvalidArgument naming `where` otherwise.
absl::Status CheckModelName(const std::string& name, const std::string& where);

// "NAME=DIR", "DIR" (named after the directory's last component), each optionally followed by
// "@TYPE" (float32, bfloat16, int8 or auto: the compute type of this model alone) for each value;
// with none, the model in `default_dir`. The last "@" after the "=" starts the type, so a
// directory whose name holds an "@" needs an explicit "@TYPE" after it. InvalidArgument for an
// empty name or directory, an unknown type, or a name given twice.
absl::StatusOr<std::vector<ModelSpec>> ParseModelSpecs(const std::vector<std::string>& values,
                                                       const std::string& default_dir);

// The checkpoints of a model directory (--model_dir=DIR): every subfolder holding a config.json,
// in name order, named after the subfolder unless an mtserve.json in it says otherwise
// ({"name": "fr-en", "compute_type": "int8"}, both optional; other files are skipped).
// InvalidArgument naming the file for an unreadable directory, an entry that cannot be examined
// (a symbolic link loop, a folder without permission) or a bad mtserve.json, and for a
// multi-target OPUS-MT checkpoint (one whose vocabulary holds target-language tokens such as
// ">>deu<<"): mtserve routes by a checkpoint's one target language, and does not serve those.
// Folders whose name starts with "." are skipped (copy a checkpoint in as ".name", then rename it).
absl::StatusOr<std::vector<ModelSpec>> ScanModelDirectory(const std::string& dir);

// ScanModelDirectory's parts: the paths of the checkpoint folders of `dir` in name order, and the
// model of one of them, `folder` (its errors as ScanModelDirectory's).
absl::StatusOr<std::vector<std::string>> ModelFolders(const std::string& dir);
absl::StatusOr<ModelSpec> ScanModelFolder(const std::string& dir, const std::string& folder);

// `specs` then every directory's models, as one list: InvalidArgument naming both places when
// two share a name.
absl::StatusOr<std::vector<ModelSpec>> JoinModelSpecs(std::vector<ModelSpec> specs,
                                                      const std::vector<std::string>& dirs);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_MODEL_SPECS_H_
