// Every value of a repeatable command-line flag: absl flags keep only the last occurrence of a
// flag, but mtserve's --model and mttranslate's --model may be given several times.
#ifndef MTSERVE_BASE_REPEATED_FLAG_VALUES_H_
#define MTSERVE_BASE_REPEATED_FLAG_VALUES_H_

#include <string>
#include <vector>

namespace mtserve {

// Every value given to --`flag` (or -`flag`) on the command line before any "--", in order, as
// "--flag=V" or "--flag V". Comma-separated values count as several; empty ones are skipped.
std::vector<std::string> RepeatedFlagValues(int argc, char** argv, const std::string& flag);

}  // namespace mtserve

#endif  // MTSERVE_BASE_REPEATED_FLAG_VALUES_H_
