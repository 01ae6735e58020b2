#include "tools/random_checkpoint.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "model/checkpoint.h"
#include "nlohmann/json.hpp"

namespace mtserve {
namespace {

namespace fs = std::filesystem;

enum class Init { kNormal, kZeros, kOnes };

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  Init init;
  int64_t zero_row = -1;  // kNormal only: a row set to zero (the embedding's padding_idx).
};

int64_t NumElements(const TensorSpec& spec) {
  int64_t n = 1;
  for (int64_t dim : spec.shape) n *= dim;
  return n;
}

// HF's _init_weights for a per-layer tensor, from its name: layer-norm weights 1, biases 0,
// linear weights normal(0, init_std).
Init LayerTensorInit(absl::string_view name) {
  if (absl::EndsWith(name, "_layer_norm.weight")) return Init::kOnes;  // Also final_layer_norm.
  if (absl::EndsWith(name, ".bias")) return Init::kZeros;
  return Init::kNormal;
}

// What MarianMTModel.save_pretrained writes for a tied-embedding model, sorted by name.
std::vector<TensorSpec> CheckpointTensors(const ModelConfig& config) {
  const int64_t d = config.d_model;
  const int64_t vocab = config.vocab_size;
  std::vector<TensorSpec> out;
  const int64_t pad_row =
      config.pad_token_id >= 0 && config.pad_token_id < vocab ? config.pad_token_id : -1;
  out.push_back({"model.shared.weight", {vocab, d}, Init::kNormal, pad_row});
  out.push_back({"final_logits_bias", {1, vocab}, Init::kZeros});
  for (MarianTensor& tensor : MarianLayerTensors(config)) {
    const Init init = LayerTensorInit(tensor.name);
    out.push_back({std::move(tensor.name), std::move(tensor.shape), init});
  }
  std::sort(out.begin(), out.end(),
            [](const TensorSpec& a, const TensorSpec& b) { return a.name < b.name; });
  return out;
}

uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Fnv1a(absl::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// Normal(0, stddev) from xoshiro256+ and Box-Muller; one independent stream per tensor, seeded
// from the seed and the tensor's name, so a tensor's values do not depend on the others.
class NormalStream {
 public:
  NormalStream(uint64_t seed, absl::string_view name, double stddev) : stddev_(stddev) {
    uint64_t state = seed ^ Fnv1a(name);
    for (uint64_t& word : s_) word = SplitMix64(state);
  }

  void Fill(float* out, size_t n) {
    size_t i = 0;
    if (has_spare_ && n > 0) {
      out[i++] = spare_;
      has_spare_ = false;
    }
    for (; i + 1 < n; i += 2) NextPair(out[i], out[i + 1]);
    if (i < n) {
      NextPair(out[i], spare_);
      has_spare_ = true;
    }
  }

 private:
  uint64_t Next() {
    const uint64_t result = s_[0] + s_[3];
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }

  void NextPair(float& a, float& b) {
    // u1 in (0, 1] so that the log is finite; u2 in [0, 1).
    const double u1 = static_cast<double>((Next() >> 11) + 1) * 0x1p-53;
    const double u2 = static_cast<double>(Next() >> 11) * 0x1p-53;
    const double radius = stddev_ * std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    a = static_cast<float>(radius * std::cos(angle));
    b = static_cast<float>(radius * std::sin(angle));
  }

  uint64_t s_[4];
  double stddev_;
  bool has_spare_ = false;
  float spare_ = 0.0f;
};

std::string JoinPath(const std::string& dir, absl::string_view file) {
  if (dir.empty()) return std::string(file);
  if (dir.back() == '/') return absl::StrCat(dir, file);
  return absl::StrCat(dir, "/", file);
}

absl::Status ErrnoError(absl::string_view what, const std::string& path, int err) {
  return absl::InternalError(absl::StrCat("cannot ", what, " ", path, ": ", std::strerror(err)));
}

// Writes the whole file at `path`, closing it even on error.
class FileWriter {
 public:
  explicit FileWriter(const std::string& path) : path_(path) {}
  ~FileWriter() {
    if (file_ != nullptr) std::fclose(file_);
  }
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  absl::Status Open() {
    file_ = std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) return ErrnoError("create", path_, errno);
    return absl::OkStatus();
  }
  absl::Status Write(const void* data, size_t size) {
    if (std::fwrite(data, 1, size, file_) != size) return ErrnoError("write", path_, errno);
    return absl::OkStatus();
  }
  absl::Status Close() {
    const int result = std::fclose(file_);
    file_ = nullptr;
    if (result != 0) return ErrnoError("write", path_, errno);
    return absl::OkStatus();
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

absl::Status WriteTensorData(const TensorSpec& spec, const RandomCheckpointOptions& options,
                             FileWriter& writer) {
  constexpr int64_t kChunk = int64_t{1} << 20;
  const int64_t total = NumElements(spec);
  const int64_t row_size = spec.shape.empty() ? 1 : spec.shape.back();
  const bool f16 = options.dtype == DType::kF16;
  std::vector<float> values(static_cast<size_t>(std::min(total, kChunk)));
  std::vector<uint16_t> halves(f16 ? values.size() : 0);
  NormalStream normal(options.seed, spec.name, options.init_std);
  for (int64_t begin = 0; begin < total; begin += kChunk) {
    const int64_t n = std::min(kChunk, total - begin);
    switch (spec.init) {
      case Init::kNormal:
        normal.Fill(values.data(), static_cast<size_t>(n));
        if (spec.zero_row >= 0) {
          const int64_t zero_begin = std::max(begin, spec.zero_row * row_size);
          const int64_t zero_end = std::min(begin + n, (spec.zero_row + 1) * row_size);
          for (int64_t i = zero_begin; i < zero_end; ++i) values[i - begin] = 0.0f;
        }
        break;
      case Init::kZeros:
        std::fill_n(values.begin(), n, 0.0f);
        break;
      case Init::kOnes:
        std::fill_n(values.begin(), n, 1.0f);
        break;
    }
    if (f16) {
      for (int64_t i = 0; i < n; ++i) halves[i] = FloatToHalf(values[i]);
      MT_RETURN_IF_ERROR(writer.Write(halves.data(), static_cast<size_t>(n) * sizeof(uint16_t)));
    } else {
      MT_RETURN_IF_ERROR(writer.Write(values.data(), static_cast<size_t>(n) * sizeof(float)));
    }
  }
  return absl::OkStatus();
}

// config.json's init_std, if it has a number there.
absl::StatusOr<double> ReadInitStd(const std::string& config_path, double fallback) {
  std::ifstream in(config_path, std::ios::binary);
  if (!in) return ErrnoError("open", config_path, errno);
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json json =
      nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(config_path, ": invalid JSON"));
  }
  auto it = json.find("init_std");
  if (it == json.end() || it->is_null()) return fallback;
  if (!it->is_number() || it->get<double>() <= 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat(config_path, ": init_std must be a positive number, got ", it->dump()));
  }
  return it->get<double>();
}

constexpr absl::string_view kRequiredFiles[] = {"config.json", "source.spm", "target.spm",
                                                "vocab.json"};
constexpr absl::string_view kOptionalFiles[] = {"generation_config.json", "tokenizer_config.json",
                                                "special_tokens_map.json"};

}  // namespace

uint16_t FloatToHalf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    if (magnitude == 0x7f800000u) return sign | 0x7c00u;  // Infinity.
    // NaN: quiet, keeping the top of the payload.
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 (halfway between 65504, the largest half, and 65536) and above round to infinity.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude >= 0x38800000u) {
    // Normal half (>= 2^-14): rebias the exponent from 127 to 15, round off 13 mantissa bits. A
    // carry out of the mantissa correctly increments the exponent.
    uint32_t half = (magnitude - 0x38000000u) >> 13;
    const uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  // Below 2^-25 (half the smallest subnormal, which ties to the even 0) rounds to zero.
  if (magnitude < 0x33000000u) return sign;
  // Subnormal half: value / 2^-24, rounded. The float is normal here (exponent 102..112).
  const uint32_t exponent = magnitude >> 23;
  const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14..24.
  uint32_t half = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

absl::Status WriteRandomSafetensors(const ModelConfig& config,
                                    const RandomCheckpointOptions& options,
                                    const std::string& path) {
  if (options.dtype != DType::kF16 && options.dtype != DType::kF32) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported dtype ", DTypeName(options.dtype), ": expected F16 or F32"));
  }
  if (config.d_model <= 0 || config.vocab_size <= 0 || config.encoder_ffn_dim <= 0 ||
      config.decoder_ffn_dim <= 0 || config.encoder_layers < 0 || config.decoder_layers < 0) {
    return absl::InvalidArgumentError("model config has a non-positive dimension");
  }
  const std::vector<TensorSpec> tensors = CheckpointTensors(config);
  const uint64_t element_size = DTypeSize(options.dtype);

  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  uint64_t offset = 0;
  for (const TensorSpec& spec : tensors) {
    const uint64_t size = static_cast<uint64_t>(NumElements(spec)) * element_size;
    header[spec.name] = {{"dtype", DTypeName(options.dtype)},
                         {"shape", spec.shape},
                         {"data_offsets", {offset, offset + size}}};
    offset += size;
  }
  std::string header_text = header.dump();
  header_text.append((8 - header_text.size() % 8) % 8, ' ');
  uint8_t header_size[8];
  for (int i = 0; i < 8; ++i) header_size[i] = static_cast<uint8_t>(header_text.size() >> (8 * i));

  const std::string temp_path = absl::StrCat(path, ".tmp");
  {
    FileWriter writer(temp_path);
    MT_RETURN_IF_ERROR(writer.Open());
    MT_RETURN_IF_ERROR(writer.Write(header_size, sizeof(header_size)));
    MT_RETURN_IF_ERROR(writer.Write(header_text.data(), header_text.size()));
    for (const TensorSpec& spec : tensors) {
      absl::Status status = WriteTensorData(spec, options, writer);
      if (status.ok()) continue;
      std::error_code ignored;
      fs::remove(temp_path, ignored);
      return status;
    }
    MT_RETURN_IF_ERROR(writer.Close());
  }
  std::error_code ec;
  fs::rename(temp_path, path, ec);
  if (ec) {
    fs::remove(temp_path, ec);
    return absl::InternalError(
        absl::StrCat("cannot rename ", temp_path, " to ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

absl::Status MakeRandomCheckpoint(const std::string& tokenizer_dir, const std::string& out_dir,
                                  RandomCheckpointOptions options) {
  std::error_code ec;
  if (tokenizer_dir.empty() || !fs::is_directory(tokenizer_dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("tokenizer directory '", tokenizer_dir, "' does not exist"));
  }
  if (out_dir.empty()) return absl::InvalidArgumentError("no output directory given");
  MT_ASSIGN_OR_RETURN(const ModelConfig config, LoadModelConfig(tokenizer_dir));
  MT_ASSIGN_OR_RETURN(options.init_std,
                      ReadInitStd(JoinPath(tokenizer_dir, "config.json"), options.init_std));
  for (absl::string_view file : kRequiredFiles) {
    const std::string path = JoinPath(tokenizer_dir, file);
    if (!fs::is_regular_file(path, ec)) {
      return absl::NotFoundError(absl::StrCat(path, ": file not found"));
    }
  }

  fs::create_directories(out_dir, ec);
  if (ec || !fs::is_directory(out_dir)) {
    return absl::InternalError(absl::StrCat("cannot create output directory '", out_dir,
                                            "': ", ec ? ec.message() : "not a directory"));
  }
  if (fs::equivalent(tokenizer_dir, out_dir, ec)) {
    return absl::InvalidArgumentError(
        absl::StrCat("output directory '", out_dir,
                     "' is the tokenizer directory; it would overwrite its model.safetensors"));
  }

  auto copy = [&](absl::string_view file) -> absl::Status {
    const std::string from = JoinPath(tokenizer_dir, file);
    const std::string to = JoinPath(out_dir, file);
    std::error_code copy_ec;
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, copy_ec);
    if (copy_ec) {
      return absl::InternalError(
          absl::StrCat("cannot copy ", from, " to ", to, ": ", copy_ec.message()));
    }
    return absl::OkStatus();
  };
  for (absl::string_view file : kRequiredFiles) MT_RETURN_IF_ERROR(copy(file));
  for (absl::string_view file : kOptionalFiles) {
    if (fs::is_regular_file(JoinPath(tokenizer_dir, file), ec)) {
      MT_RETURN_IF_ERROR(copy(file));
    } else {
      fs::remove(JoinPath(out_dir, file), ec);  // Stale from an earlier run with another config.
    }
  }
  return WriteRandomSafetensors(config, options, JoinPath(out_dir, "model.safetensors"));
}

}  // namespace mtserve
