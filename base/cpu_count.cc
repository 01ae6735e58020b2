#include "base/cpu_count.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <thread>

namespace mtserve {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<double> CpuMaxQuota(const std::string& cpu_max) {
  std::istringstream in(cpu_max);
  std::string quota;
  double period = 0;
  if (!(in >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  try {
    const double value = std::stod(quota);
    if (value <= 0) return std::nullopt;
    return value / period;
  } catch (...) {
    return std::nullopt;
  }
}

std::optional<double> CfsQuota(const std::string& quota_us, const std::string& period_us) {
  try {
    const double quota = std::stod(quota_us);
    const double period = std::stod(period_us);
    if (quota <= 0 || period <= 0) return std::nullopt;  // -1: no limit.
    return quota / period;
  } catch (...) {
    return std::nullopt;
  }
}

int UsableCpus() {
  int cpus = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
  std::optional<double> quota = CpuMaxQuota(ReadFile("/sys/fs/cgroup/cpu.max"));
  if (!quota.has_value()) {
    quota = CfsQuota(ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"),
                     ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us"));
  }
  if (quota.has_value()) cpus = std::min(cpus, static_cast<int>(std::ceil(*quota)));
  return std::max(cpus, 1);
}

}  // namespace mtserve
