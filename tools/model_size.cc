// model_size: the memory a model holds in a compute type, three ways.
//
//   model_size DIR [float32|bfloat16|int8]     (default float32)
//
// Prints EstimateModelMemory's figures (from config.json and model.safetensors' header, before
// loading), Model::resident_bytes() after Model::Load (counted from the allocations), and how much
// this process's resident anonymous memory (RssAnon) grew over the load, and over a second load
// of the same model beside the first, each also after malloc_trim (glibc gives back what the
// load's temporaries left free). One type a run: a load after another type's was freed would
// reuse the memory it left with the allocator. Figures in docs/operations.md#memory. Also the
// second load's time, and what hashing the checkpoint's files (the content fingerprint, part of
// every load) takes alone, the files in the page cache as they are after a load.
#include "model/model_size.h"

#include <malloc.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "base/file_hash.h"
#include "base/process_memory.h"
#include "model/compute_type.h"
#include "model/model.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: model_size DIR [float32|bfloat16|int8]\n";
    return 2;
  }
  const std::string dir = argv[1];
  absl::StatusOr<mtserve::ComputeType> type =
      mtserve::ParseComputeType(argc == 3 ? argv[2] : "float32");
  if (!type.ok()) {
    std::cerr << "model_size: " << type.status() << "\n";
    return 2;
  }
  const absl::StatusOr<mtserve::ModelBytes> estimate = mtserve::EstimateModelMemory(dir, *type);
  if (!estimate.ok()) {
    std::cerr << "model_size: " << estimate.status() << "\n";
    return 1;
  }
  // The first load also pays what a process pays once (the SentencePiece module, oneDNN's engine
  // and threads); the second, beside the first, what each further model costs.
  int64_t growth[2];
  int64_t trimmed[2];
  std::shared_ptr<const mtserve::Model> models[2];
  absl::Duration load_time;
  for (int i = 0; i < 2; ++i) {
    const int64_t before = mtserve::ResidentAnonymousBytes();
    const absl::Time start = absl::Now();
    absl::StatusOr<std::shared_ptr<const mtserve::Model>> model = mtserve::Model::Load(dir, *type);
    load_time = absl::Now() - start;
    if (!model.ok()) {
      std::cerr << "model_size: " << model.status() << "\n";
      return 1;
    }
    growth[i] = mtserve::ResidentAnonymousBytes() - before;
    // What glibc keeps of the load's freed temporaries, given back.
    malloc_trim(0);
    trimmed[i] = mtserve::ResidentAnonymousBytes() - before;
    models[i] = *std::move(model);
  }
  const absl::Time hash_start = absl::Now();
  const absl::StatusOr<std::string> hash = mtserve::HashFiles(dir, mtserve::Model::Files());
  const absl::Duration hash_time = absl::Now() - hash_start;
  if (!hash.ok()) {
    std::cerr << "model_size: " << hash.status() << "\n";
    return 1;
  }
  auto mib = [](int64_t bytes) { return absl::StrFormat("%.2f MiB", bytes / 1048576.0); };
  const mtserve::Model& m = *models[0];
  std::cout << absl::StrFormat("model      %s (%s)\n", dir, mtserve::ComputeTypeName(*type))
            << absl::StrFormat("estimate   %d bytes (%s): weights %d, tokenizer %d\n",
                               estimate->total(), mib(estimate->total()), estimate->weights,
                               estimate->tokenizer)
            << absl::StrFormat("resident   %d bytes (%s): weights %d, tokenizer %d\n",
                               m.resident_bytes(), mib(m.resident_bytes()), m.weight_bytes(),
                               m.tokenizer_bytes())
            << absl::StrFormat("RSS growth %d bytes (%s), %d (%s) after malloc_trim: first load\n",
                               growth[0], mib(growth[0]), trimmed[0], mib(trimmed[0]))
            << absl::StrFormat("RSS growth %d bytes (%s), %d (%s) after malloc_trim: second load\n",
                               growth[1], mib(growth[1]), trimmed[1], mib(trimmed[1]))
            << absl::StrFormat(
                   "load       %.1f ms (the second), of which hashing the files %.1f ms\n",
                   absl::ToDoubleMilliseconds(load_time), absl::ToDoubleMilliseconds(hash_time));
  return 0;
}
