// How many cores this process may use: the default for --workers. In a container,
// std::thread::hardware_concurrency() reports the host's cores, not the CPU limit, and a
// worker per host core would fight over the few the limit allows.
#ifndef MTSERVE_BASE_CPU_COUNT_H_
#define MTSERVE_BASE_CPU_COUNT_H_

#include <optional>
#include <string>

namespace mtserve {

// The CPUs this process may use: those of its affinity mask, fewer if a cgroup CPU quota (v2
// cpu.max or v1 cfs_quota_us / cfs_period_us) allows less (rounded up); at least 1.
int UsableCpus();

// The quota in cores a cgroup v2 cpu.max line ("max 100000", "200000 100000") allows, or none.
std::optional<double> CpuMaxQuota(const std::string& cpu_max);

// The same for cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us contents.
std::optional<double> CfsQuota(const std::string& quota_us, const std::string& period_us);

}  // namespace mtserve

#endif  // MTSERVE_BASE_CPU_COUNT_H_
