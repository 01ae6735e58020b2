// Flags from the environment, for containers and Kubernetes ConfigMaps: MTSERVE_WORKERS=4 is
// --workers=4. The command line wins over the environment.
#ifndef MTSERVE_BASE_ENV_FLAGS_H_
#define MTSERVE_BASE_ENV_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace mtserve {

// For each flag in `names`, parses the variable `prefix` + its upper-cased name when set. Call
// before absl::ParseCommandLine, so that command-line values override these. InvalidArgument
// naming the variable for a value the flag rejects.
absl::Status SetFlagsFromEnvironment(const std::string& prefix,
                                     const std::vector<std::string>& names);

// The names of the flags defined in source file `file` (pass __FILE__), sorted.
std::vector<std::string> FlagsDefinedIn(const std::string& file);

// The environment variable that sets flag `name`.
std::string FlagVariable(const std::string& prefix, const std::string& name);

}  // namespace mtserve

#endif  // MTSERVE_BASE_ENV_FLAGS_H_
