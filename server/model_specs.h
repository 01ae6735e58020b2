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
};

// --compute_type as absl flags hold it: the name given ("auto" stays "auto", so that --help
// shows what was asked for), checked when parsed so that a bad value, from the command line or
// MTSERVE_COMPUTE_TYPE, is refused naming where it came from.
struct ComputeTypeFlag {
  std::string name = "float32";
};
bool AbslParseFlag(absl::string_view text, ComputeTypeFlag* flag, std::string* error);
std::string AbslUnparseFlag(const ComputeTypeFlag& flag);

// "NAME=DIR", "DIR" (named after the directory's last component), each optionally followed by
// "@TYPE" (float32, bfloat16, int8 or auto: the compute type of this model alone) for each value;
// with none, the model in `default_dir`. The last "@" after the "=" starts the type, so a
// directory whose name holds an "@" needs an explicit "@TYPE" after it. InvalidArgument for an
// empty name or directory, an unknown type, or a name given twice.
absl::StatusOr<std::vector<ModelSpec>> ParseModelSpecs(const std::vector<std::string>& values,
                                                       const std::string& default_dir);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_MODEL_SPECS_H_
