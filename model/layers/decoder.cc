#include "model/layers/decoder.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "model/kernels/one_query_attention.h"
#include "model/kernels/quantize.h"
#include "model/ops/phase_profile.h"
#include "model/shortlist.h"

namespace mtserve {

namespace {

VectorType KeyValueType(const Model& model) {
  return model.compute_type() == ComputeType::kFloat32 ? VectorType::kFloat32
                                                       : VectorType::kBFloat16;
}

// Floats of storage that hold `elements` keys or values of `type` (two bfloat16 to a float;
// an odd d_model rounds up).
int64_t StorageFloats(VectorType type, int64_t elements) {
  return type == VectorType::kFloat32 ? elements : (elements + 1) / 2;
}

}  // namespace

Decoder::Decoder(const Model& model)
    : model_(model),
      heads_(model.config().decoder_attention_heads),
      head_dim_(model.config().d_model / model.config().decoder_attention_heads),
      vector_type_(KeyValueType(model)),
      vector_bytes_(static_cast<size_t>(model.config().d_model) *
                    (vector_type_ == VectorType::kFloat32 ? sizeof(float) : sizeof(uint16_t))),
      cache_(model.config().decoder_layers,
             static_cast<int>(StorageFloats(vector_type_, model.config().d_model))) {}

void Decoder::Reset() {
  // The step buffers stay (Fit shrinks them when a step needs far less); the cache keeps a
  // bounded pool (KvCache::Clear).
  cache_.Clear();
  RestrictOutputs({});
  sentences_.clear();
  free_sentences_.clear();
  free_groups_.clear();
  for (size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].live = 0;
    free_groups_.push_back(static_cast<int>(g));
  }
  KeepOneFreeBuffer();
}

std::vector<int> Decoder::AddSentences(ComputeContext& ctx, const float* encoder_output,
                                       const std::vector<int>& lengths, int max_length) {
  const int d = model_.config().d_model;
  const int count = static_cast<int>(lengths.size());
  const int64_t rows = static_cast<int64_t>(count) * max_length;
  const size_t floats = StorageFloats(vector_type_, rows * 2 * d);  // Per layer.
  // The free group that kept its buffers (KeepOneFreeBuffer), or else any.
  auto kept = std::find_if(free_groups_.begin(), free_groups_.end(),
                           [&](int free) { return !groups_[free].key_values.empty(); });
  if (kept == free_groups_.end() && !free_groups_.empty()) kept = free_groups_.end() - 1;
  int g;
  if (kept == free_groups_.end()) {
    g = static_cast<int>(groups_.size());
    groups_.emplace_back();
  } else {
    g = *kept;
    free_groups_.erase(kept);
  }
  SourceGroup& group = groups_[g];
  group.max_length = max_length;
  group.live = count;
  group.floats = floats;
  ScopedPhase phase(ctx, Phase::kCrossKeyValues);
  const auto& layers = model_.weights().decoder_layers;
  group.key_values.resize(layers.size());
  for (size_t l = 0; l < layers.size(); ++l) {
    float* key_values = group.key_values[l].Reserve(floats);
    // One sentence at a time: the shape then depends on the (bucketed) length only, not on how
    // many sentences joined together (see shape_buckets.h).
    for (int i = 0; i < count; ++i) {
      const float* source = encoder_output + int64_t{i} * max_length * d;
      const int64_t first = int64_t{i} * max_length * 2 * d;  // Elements.
      if (vector_type_ == VectorType::kFloat32) {
        layers[l].cross_key_value.Forward(ctx, source, max_length, key_values + first);
      } else {
        float* rounded = cross_key_values_.Fit(static_cast<size_t>(max_length) * 2 * d);
        layers[l].cross_key_value.Forward(ctx, source, max_length, rounded);
        ToBFloat16(rounded, max_length, 2 * d, 2 * d,
                   reinterpret_cast<uint16_t*>(key_values) + first);
      }
    }
  }

  std::vector<int> ids(count);
  for (int i = 0; i < count; ++i) {
    if (free_sentences_.empty()) {
      ids[i] = static_cast<int>(sentences_.size());
      sentences_.emplace_back();
    } else {
      ids[i] = free_sentences_.back();
      free_sentences_.pop_back();
    }
    sentences_[ids[i]] = {g, i, lengths[i]};
  }
  return ids;
}

size_t Decoder::memory_bytes() const {
  size_t bytes = static_cast<size_t>(restricted_projection_.memory_bytes()) +
                 cache_.memory_bytes() + x_.bytes() + qkv_.bytes() + query_.bytes() +
                 context_.bytes() + ffn_.bytes() + attention_.bytes() + cross_key_values_.bytes();
  for (const SourceGroup& group : groups_) {
    for (const FloatBuffer& buffer : group.key_values) bytes += buffer.bytes();
  }
  bytes +=
      (keys_.capacity() + values_.capacity() + step_keys_.capacity() + step_values_.capacity()) *
      sizeof(void*);
  return bytes;
}

size_t Decoder::retained_bytes() const {
  size_t bytes = 0;
  for (const SourceGroup& group : groups_) {
    const size_t used = group.live > 0 ? group.floats * sizeof(float) : 0;
    for (const FloatBuffer& buffer : group.key_values) bytes += buffer.bytes() - used;
  }
  return bytes;
}

void Decoder::KeepOneFreeBuffer() {
  int largest = -1;
  for (int g : free_groups_) {
    if (groups_[g].key_values.empty()) continue;
    if (largest >= 0 &&
        groups_[g].key_values[0].capacity() <= groups_[largest].key_values[0].capacity()) {
      ReleaseGroup(g);
      continue;
    }
    if (largest >= 0) ReleaseGroup(largest);
    largest = g;
  }
}

void Decoder::ReleaseGroup(int g) {
  for (FloatBuffer& buffer : groups_[g].key_values) buffer.Release();
  groups_[g].key_values.clear();
}

void Decoder::ReleaseFreeGroups() {
  for (int g : free_groups_) ReleaseGroup(g);
}

void Decoder::RemoveSentence(int sentence) {
  Sentence& s = sentences_[sentence];
  assert(s.group >= 0);
  SourceGroup& group = groups_[s.group];
  if (--group.live == 0) {
    free_groups_.push_back(s.group);
    KeepOneFreeBuffer();
  }
  s.group = -1;
  free_sentences_.push_back(sentence);
}

void Decoder::Step(ComputeContext& ctx, const std::vector<int>& ids,
                   const std::vector<int>& row_sentence, FloatBuffer& logits,
                   std::vector<int>* alignment) {
  const ModelConfig& config = model_.config();
  const int rows = static_cast<int>(ids.size());
  assert(rows == cache_.rows());
  const int d = config.d_model;
  const int64_t step = cache_.steps();
  cache_.AppendStep();

  // Each row's position, and how far back the oldest row reads the cache.
  positions_.resize(rows);
  int64_t oldest = step;
  int max_positions = 0;
  for (int r = 0; r < rows; ++r) {
    oldest = std::min(oldest, cache_.Birth(r));
    positions_[r] = static_cast<int>(step - cache_.Birth(r));
    max_positions =
        std::max({max_positions, positions_[r] + 1, sentences_[row_sentence[r]].length});
  }

  float* x = x_.Fit(static_cast<size_t>(rows) * d);
  ScopedPhase phase(ctx, Phase::kEmbeddings);
  model_.weights().target_embeddings->Forward(ids.data(), positions_.data(), rows, x);

  float* qkv = qkv_.Fit(static_cast<size_t>(rows) * 3 * d);
  float* query = query_.Fit(static_cast<size_t>(rows) * d);
  float* context = context_.Fit(static_cast<size_t>(rows) * d);
  float* ffn = ffn_.Fit(static_cast<size_t>(rows) * config.decoder_ffn_dim);

  // Self-attention reads the positions of each row's lineage; cross-attention reads the
  // positions of the row's source sentence. Both go through per-row pointer tables.
  keys_.resize(static_cast<size_t>(rows) * max_positions);
  values_.resize(keys_.size());
  lengths_.resize(rows);
  step_keys_.resize(step + 1 - oldest);
  step_values_.resize(step_keys_.size());

  const auto& layers = model_.weights().decoder_layers;
  for (size_t l = 0; l < layers.size(); ++l) {
    const DecoderLayerWeights& layer = layers[l];
    const int layer_index = static_cast<int>(l);

    phase.Switch(Phase::kSelfAttention);
    layer.self_qkv.Forward(ctx, x, rows, qkv);
    for (int64_t s = oldest; s <= step; ++s) {
      step_keys_[s - oldest] = reinterpret_cast<char*>(cache_.Keys(layer_index, s));
      step_values_[s - oldest] = reinterpret_cast<char*>(cache_.Values(layer_index, s));
    }
    char* new_keys = step_keys_.back();
    char* new_values = step_values_.back();
    if (vector_type_ == VectorType::kFloat32) {
      for (int r = 0; r < rows; ++r) {
        std::memcpy(new_keys + r * vector_bytes_, qkv + static_cast<size_t>(r) * 3 * d + d,
                    vector_bytes_);
        std::memcpy(new_values + r * vector_bytes_, qkv + static_cast<size_t>(r) * 3 * d + 2 * d,
                    vector_bytes_);
      }
    } else {
      ToBFloat16(qkv + d, rows, d, 3 * d, reinterpret_cast<uint16_t*>(new_keys));
      ToBFloat16(qkv + 2 * d, rows, d, 3 * d, reinterpret_cast<uint16_t*>(new_values));
    }
    for (int r = 0; r < rows; ++r) {
      const int* lineage = cache_.Lineage(r);
      const int64_t first = cache_.Birth(r) - oldest;
      const void** k = keys_.data() + static_cast<size_t>(r) * max_positions;
      const void** v = values_.data() + static_cast<size_t>(r) * max_positions;
      for (int a = 0; a <= positions_[r]; ++a) {
        k[a] = step_keys_[first + a] + lineage[a] * vector_bytes_;
        v[a] = step_values_[first + a] + lineage[a] * vector_bytes_;
      }
      lengths_[r] = positions_[r] + 1;
    }
    OneQueryAttention({qkv, 3 * d, keys_.data(), values_.data(), lengths_.data(), max_positions,
                       rows, heads_, head_dim_, context, nullptr, vector_type_});
    layer.self_out_proj.Forward(ctx, context, rows, x, Epilogue::kAddToOutput);
    layer.self_attention_norm.Forward(x, rows);

    phase.Switch(Phase::kCrossAttention);
    layer.cross_query.Forward(ctx, x, rows, query);
    for (int r = 0; r < rows; ++r) {
      const Sentence& sentence = sentences_[row_sentence[r]];
      const SourceGroup& group = groups_[sentence.group];
      // Key and value of a position are one [2 * d] row: value after key.
      const char* first =
          reinterpret_cast<const char*>(group.key_values[l].data()) +
          static_cast<size_t>(sentence.index) * group.max_length * 2 * vector_bytes_;
      const void** k = keys_.data() + static_cast<size_t>(r) * max_positions;
      const void** v = values_.data() + static_cast<size_t>(r) * max_positions;
      for (int s = 0; s < sentence.length; ++s) {
        k[s] = first + static_cast<size_t>(s) * 2 * vector_bytes_;
        v[s] = first + (static_cast<size_t>(s) * 2 + 1) * vector_bytes_;
      }
      lengths_[r] = sentence.length;
    }
    float* attention = nullptr;
    if (alignment != nullptr && l + 1 == layers.size()) {
      attention = attention_.Fit(static_cast<size_t>(rows) * max_positions);
    }
    OneQueryAttention({query, d, keys_.data(), values_.data(), lengths_.data(), max_positions, rows,
                       heads_, head_dim_, context, attention, vector_type_});
    if (attention != nullptr) {
      alignment->resize(rows);
      for (int r = 0; r < rows; ++r) {
        const float* row = attention + static_cast<size_t>(r) * max_positions;
        (*alignment)[r] = static_cast<int>(std::max_element(row, row + lengths_[r]) - row);
      }
    }
    layer.cross_out_proj.Forward(ctx, context, rows, x, Epilogue::kAddToOutput);
    layer.cross_attention_norm.Forward(x, rows);

    phase.Switch(Phase::kFeedForward);
    layer.fc1.Forward(ctx, x, rows, ffn, model_.weights().activation);
    layer.fc2.Forward(ctx, ffn, rows, x, Epilogue::kAddToOutput);
    layer.ffn_norm.Forward(x, rows);
  }
  phase.Switch(Phase::kVocabProjection);
  if (!restricted_) {
    const Linear& whole = model_.weights().output_projection;
    whole.Forward(ctx, x, rows, logits.Fit(static_cast<size_t>(rows) * whole.out_features()));
    return;
  }
  // [always-line | the others] in each row.
  const Linear* always = after_always_ ? model_.always_projection() : nullptr;
  const int first = always == nullptr ? 0 : always->out_features();
  const int width = first + restricted_projection_.out_features();
  float* y = logits.Fit(static_cast<size_t>(rows) * width);
  if (always != nullptr) always->Forward(ctx, x, rows, y, Epilogue::kNone, 0, width);
  if (restricted_projection_.out_features() > 0) {
    restricted_projection_.Forward(ctx, x, rows, y + first, Epilogue::kNone, 0, width);
  }
}

void Decoder::RestrictOutputs(absl::Span<const int> ids, bool after_always) {
  restricted_ = after_always || !ids.empty();
  after_always_ = after_always;
  restricted_projection_ = ids.empty() ? Linear() : model_.weights().output_projection.Outputs(ids);
}

const std::vector<int>* Decoder::always_outputs() const {
  return model_.always_projection() == nullptr ? nullptr : &model_.shortlist()->always();
}

}  // namespace mtserve
