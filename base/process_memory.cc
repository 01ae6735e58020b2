#include "base/process_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace mtserve {

int64_t ResidentAnonymousBytes() {
  std::ifstream status("/proc/self/status");
  constexpr char kKey[] = "RssAnon:";
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(kKey, 0) != 0) continue;
    std::istringstream fields(line.substr(sizeof(kKey) - 1));
    int64_t kib = -1;
    std::string unit;
    fields >> kib >> unit;
    return kib >= 0 && unit == "kB" ? kib * 1024 : -1;
  }
  return -1;
}

}  // namespace mtserve
