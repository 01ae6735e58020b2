// Measures an office document's package (text/office/office_package.h) on each FILE given:
// the time to open it and read every entry, or to refuse it (with the message), the median of
// --repeat runs with the default limits. Prints a Markdown table (docs/benchmarks.md; inputs from
// tools/make_office_benchmark_inputs.py).
//
//   benchmark_office_package [--repeat=9] FILE...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "text/office/office_package.h"

ABSL_FLAG(int, repeat, 9, "runs per file; the median is printed");

namespace {

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<char*> files = absl::ParseCommandLine(argc, argv);
  std::printf("| file | bytes | result | open (ms) | open + read all (ms) | inflated bytes |\n");
  std::printf("|---|---:|---|---:|---:|---:|\n");
  for (size_t f = 1; f < files.size(); ++f) {
    std::ifstream in(files[f], std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    std::vector<double> open_ms, total_ms;
    std::string result;
    size_t inflated = 0;
    for (int r = 0; r < absl::GetFlag(FLAGS_repeat); ++r) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<mtserve::OfficePackage> package = mtserve::OfficePackage::Open(bytes);
      const auto opened = std::chrono::steady_clock::now();
      inflated = 0;
      result = "read";
      if (!package.ok()) {
        result = std::string(package.status().message());
      } else {
        for (const std::string& name : package->names()) {
          absl::StatusOr<std::string> content = package->Read(name);
          if (!content.ok()) {
            result = std::string(content.status().message());
            break;
          }
          inflated += content->size();
        }
      }
      const auto done = std::chrono::steady_clock::now();
      open_ms.push_back(std::chrono::duration<double, std::milli>(opened - start).count());
      total_ms.push_back(std::chrono::duration<double, std::milli>(done - start).count());
    }
    std::printf("| %s | %zu | %s | %.3f | %.3f | %zu |\n", files[f], bytes.size(), result.c_str(),
                Median(open_ms), Median(total_ms), inflated);
  }
  return 0;
}
