// The --model flag: which checkpoints to serve and under which names.
#ifndef MTSERVE_SERVER_MODEL_SPECS_H_
#define MTSERVE_SERVER_MODEL_SPECS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mtserve {

struct ModelSpec {
  std::string name;
  std::string dir;
};

// Every value given to --`flag` on the command line, in order: absl flags keep only the last
// occurrence, but --model is repeatable. Comma-separated values count as several.
std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& flag);

// "NAME=DIR" or "DIR" (named after the directory's last component) for each value; with none,
// the model in `default_dir`. InvalidArgument for an empty name or directory, or a name given
// twice.
absl::StatusOr<std::vector<ModelSpec>> ParseModelSpecs(const std::vector<std::string>& values,
                                                       const std::string& default_dir);

}  // namespace mtserve

#endif  // MTSERVE_SERVER_MODEL_SPECS_H_
