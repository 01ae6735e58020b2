// benchmark_peak_matmul: the multiply-adds per second this CPU reaches in each compute type, a
// measured ceiling for the engine's phase profile (mttranslate --profile, scripts/profile.sh).
//
//   benchmark_peak_matmul [--threads=1] [--size=2048] [--repeats=5]
//
// Runs oneDNN's matmul of two square matrices of --size (the weight packed once in the layout
// oneDNN prefers, as Linear packs its weights) in float32, bfloat16 (products summed in float32)
// and int8 (unsigned activations, signed weights, 32-bit sums, as Linear's VNNI path), each
// --repeats times after one warm-up, on --threads OpenMP threads, and prints the best run of each
// type as a line of key=value pairs:
//
//   peak_matmul type=int8 threads=1 size=2048 gmacs=123.45
//
// A type the CPU has no kernel for is printed with gmacs=0 and the reason.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "model/compute_type.h"

ABSL_FLAG(int, threads, 1, "OpenMP threads of the matmul (1: one core's ceiling).");
ABSL_FLAG(int, size, 2048, "Rows and columns of the square matrices.");
ABSL_FLAG(int, repeats, 5, "Timed runs of each type; the best is printed.");

namespace mtserve {
namespace {

using dnnl::memory;
using dt = memory::data_type;
using tag = memory::format_tag;

// The best run's multiply-adds per second, in billions.
double PeakGMacs(ComputeType type, int64_t n, int repeats) {
  const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const dt src_type = type == ComputeType::kFloat32
                          ? dt::f32
                          : (type == ComputeType::kBFloat16 ? dt::bf16 : dt::u8);
  const dt weight_type = type == ComputeType::kInt8 ? dt::s8 : src_type;
  const dt dst_type = type == ComputeType::kInt8 ? dt::s32 : dt::f32;
  const memory::desc src_md({n, n}, src_type, tag::ab);
  const memory::desc dst_md({n, n}, dst_type, tag::ab);
  const dnnl::matmul::primitive_desc pd(
      dnnl::matmul::desc(src_md, memory::desc({n, n}, weight_type, tag::any), dst_md), engine);
  // Values do not change the time; zeroed buffers of the right sizes are enough.
  std::vector<uint8_t> src(src_md.get_size()), plain_weight(n * n * 4), dst(dst_md.get_size());
  memory src_memory(src_md, engine, src.data());
  memory dst_memory(dst_md, engine, dst.data());
  memory plain(memory::desc({n, n}, weight_type, tag::ab), engine, plain_weight.data());
  memory weight(pd.weights_desc(), engine);
  dnnl::reorder(plain, weight).execute(stream, plain, weight);
  const dnnl::matmul matmul(pd);
  auto run = [&] {
    matmul.execute(
        stream,
        {{DNNL_ARG_SRC, src_memory}, {DNNL_ARG_WEIGHTS, weight}, {DNNL_ARG_DST, dst_memory}});
    stream.wait();
  };
  run();  // Warm-up: JIT code, page faults.
  double best = 0;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(n) * n * n / seconds / 1e9);
  }
  return best;
}

int Run() {
  const int threads = absl::GetFlag(FLAGS_threads);
  const int size = absl::GetFlag(FLAGS_size);
  const int repeats = absl::GetFlag(FLAGS_repeats);
  if (threads < 1 || size < 1 || repeats < 1) {
    std::fprintf(stderr, "benchmark_peak_matmul: need threads, size and repeats >= 1\n");
    return 2;
  }
  omp_set_num_threads(threads);
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kBFloat16, ComputeType::kInt8}) {
    const std::string name(ComputeTypeName(type));
    if (absl::Status supported = CheckComputeTypeSupported(type); !supported.ok()) {
      std::printf("peak_matmul type=%s threads=%d size=%d gmacs=0 unsupported: %s\n", name.c_str(),
                  threads, size, std::string(supported.message()).c_str());
      continue;
    }
    std::printf("peak_matmul type=%s threads=%d size=%d gmacs=%.2f\n", name.c_str(), threads, size,
                PeakGMacs(type, size, repeats));
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace mtserve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Prints the multiply-adds per second of a large oneDNN matmul in each compute type.\n"
      "  benchmark_peak_matmul [--threads=1] [--size=2048] [--repeats=5]");
  absl::ParseCommandLine(argc, argv);
  return mtserve::Run();
}
