#include "model/tokenizer.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "base/excerpt.h"
#include "base/status_macros.h"
#include "model/sentencepiece_module.h"

namespace mtserve {
namespace {

// Opens the SentencePiece module (see sentencepiece_module.h) once: from ../lib next to the
// executable (build tree and installs alike), else where the build put it, else the loader's
// search path.
absl::StatusOr<LoadSentencePieceFn> SentencePieceLoader() {
  static absl::Mutex mutex(absl::kConstInit);
  static absl::StatusOr<LoadSentencePieceFn>* loader = nullptr;
  absl::MutexLock lock(&mutex);
  if (loader != nullptr) return *loader;
  std::vector<std::string> candidates;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) candidates.push_back((exe.parent_path() / "../lib" / kSentencePieceModuleName).string());
  candidates.push_back(MTSERVE_SENTENCEPIECE_MODULE_PATH);
  candidates.push_back(kSentencePieceModuleName);
  std::string errors;
  for (const std::string& path : candidates) {
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path, ec)) continue;
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      absl::StrAppend(&errors, "; ", dlerror());
      continue;
    }
    auto load = reinterpret_cast<LoadSentencePieceFn>(dlsym(handle, kLoadSentencePieceSymbol));
    if (load != nullptr) {
      loader = new absl::StatusOr<LoadSentencePieceFn>(load);
      return *loader;
    }
    absl::StrAppend(&errors, "; ", path, " has no ", kLoadSentencePieceSymbol);
  }
  loader = new absl::StatusOr<LoadSentencePieceFn>(absl::FailedPreconditionError(
      absl::StrCat("cannot load the SentencePiece module ", kSentencePieceModuleName,
                   " (looked next to the executable, in ", MTSERVE_SENTENCEPIECE_MODULE_PATH,
                   " and on the library path)", errors)));
  return *loader;
}

// Loads one SentencePiece model; the error names the file, whatever libsentencepiece reports.
absl::StatusOr<std::unique_ptr<SentencePieceModel>> LoadSpm(const std::string& path) {
  // libsentencepiece opens the file itself, and would wait forever on a FIFO.
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    return absl::NotFoundError(absl::StrCat(path, ": SentencePiece model not found"));
  }
  if (!std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not a regular file"));
  }
  MT_ASSIGN_OR_RETURN(const LoadSentencePieceFn load, SentencePieceLoader());
  std::string error;
  std::unique_ptr<SentencePieceModel> spm(load(path.c_str(), &error));
  if (spm == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a valid SentencePiece model: ", error));
  }
  return spm;
}

// The pieces of `text`, and with `spans` the bytes of `text` each came from.
std::vector<std::string> Pieces(const SentencePieceModel& spm, const Vocab& vocab,
                                absl::string_view text, std::vector<Segment>* spans = nullptr) {
  std::vector<std::string> pieces;
  size_t offset = 0;  // Of what SentencePiece encodes, in `text`.
  // HF MarianTokenizer keeps a leading target-language code such as ">>por<<" as one token
  // instead of letting SentencePiece split it. HF does so for any ">>...<<"; we only do it for
  // codes the vocabulary has (the languages a multilingual model supports): the golden HF output
  // (tests/data/golden/opus-mt-tokenization.jsonl) splits ">>fra<<", which neither of its
  // vocabularies has, into ordinary pieces, and an unsupported code would only become <unk>.
  if (absl::StartsWith(text, ">>")) {
    const size_t end = text.find("<<", 2);
    if (end != absl::string_view::npos) {
      const absl::string_view code = text.substr(0, end + 2);
      if (vocab.Find(code).has_value()) {
        pieces.emplace_back(code);
        if (spans != nullptr) spans->push_back({0, code.size()});
        offset = code.size();
        text.remove_prefix(code.size());
      }
    }
  }
  std::vector<std::string> spm_pieces;
  // Encoding only fails on an unloaded model, which Load rules out.
  if (spans == nullptr) {
    if (spm.Encode(std::string_view(text.data(), text.size()), spm_pieces)) {
      pieces.insert(pieces.end(), std::make_move_iterator(spm_pieces.begin()),
                    std::make_move_iterator(spm_pieces.end()));
    }
    return pieces;
  }
  std::vector<std::pair<size_t, size_t>> spm_spans;
  if (spm.EncodeWithSpans(std::string_view(text.data(), text.size()), spm_pieces, spm_spans)) {
    pieces.insert(pieces.end(), std::make_move_iterator(spm_pieces.begin()),
                  std::make_move_iterator(spm_pieces.end()));
    for (const auto& [begin, end] : spm_spans) {
      const size_t b = std::min(begin, text.size()),
                   e = std::min(std::max(end, begin), text.size());
      spans->push_back({offset + b, offset + e});
    }
  }
  return pieces;
}

}  // namespace

Tokenizer::~Tokenizer() = default;

absl::StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& dir,
                                                           const ModelConfig& config) {
  const std::filesystem::path root(dir);
  std::unique_ptr<Tokenizer> tokenizer(new Tokenizer());
  MT_ASSIGN_OR_RETURN(tokenizer->source_, LoadSpm((root / "source.spm").string()));
  MT_ASSIGN_OR_RETURN(tokenizer->target_, LoadSpm((root / "target.spm").string()));
  const std::string vocab_path = (root / "vocab.json").string();
  MT_ASSIGN_OR_RETURN(tokenizer->vocab_, Vocab::Load(vocab_path));

  // Like HF (which raises KeyError), a vocabulary without <unk> cannot map unknown pieces.
  const std::optional<int> unk = tokenizer->vocab_.Find("<unk>");
  if (!unk.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(vocab_path, ": has no '<unk>' piece"));
  }
  tokenizer->unk_id_ = *unk;
  // Every id the tokenizer can produce indexes the embedding table (vocab_size rows): one past it
  // would fail the requests that use that piece, and the texts batched with them.
  if (tokenizer->vocab_.size() > config.vocab_size) {
    const int id = tokenizer->vocab_.size() - 1;
    return absl::InvalidArgumentError(absl::StrCat(
        vocab_path, ": piece '", Excerpt(tokenizer->vocab_.Piece(id)), "' has id ", id,
        ", outside the model's vocabulary (config.json vocab_size ", config.vocab_size, ")"));
  }
  // eos is appended to every encoding; catch a config that does not belong to this vocabulary.
  if (config.eos_token_id < 0 || config.eos_token_id >= tokenizer->vocab_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(vocab_path, ": the config's eos_token_id ", config.eos_token_id,
                     " is outside the vocabulary (size ", tokenizer->vocab_.size(), ")"));
  }
  tokenizer->eos_id_ = config.eos_token_id;
  tokenizer->pad_id_ = config.pad_token_id;
  return tokenizer;
}

std::vector<int> Tokenizer::Encode(const SentencePieceModel& spm, absl::string_view text) const {
  const std::vector<std::string> pieces = Pieces(spm, vocab_, text);
  std::vector<int> ids;
  ids.reserve(pieces.size() + 1);
  // Ids come from vocab.json, not from the SentencePiece model: their numbering differs.
  for (const std::string& piece : pieces) ids.push_back(vocab_.Find(piece).value_or(unk_id_));
  ids.push_back(eos_id_);
  return ids;
}

std::vector<int> Tokenizer::EncodeSource(absl::string_view text) const {
  return Encode(*source_, text);
}

std::vector<int> Tokenizer::EncodeTarget(absl::string_view text) const {
  return Encode(*target_, text);
}

std::vector<std::string> Tokenizer::SourcePieces(absl::string_view text) const {
  return Pieces(*source_, vocab_, text);
}

std::vector<int> Tokenizer::EncodeSourceWithSpans(absl::string_view text,
                                                  std::vector<Segment>& spans) const {
  return EncodeWithSpans(*source_, text, spans);
}

std::vector<int> Tokenizer::EncodeTargetWithSpans(absl::string_view text,
                                                  std::vector<Segment>& spans) const {
  return EncodeWithSpans(*target_, text, spans);
}

std::vector<int> Tokenizer::EncodeWithSpans(const SentencePieceModel& spm, absl::string_view text,
                                            std::vector<Segment>& spans) const {
  spans.clear();
  const std::vector<std::string> pieces = Pieces(spm, vocab_, text, &spans);
  std::vector<int> ids;
  ids.reserve(pieces.size() + 1);
  for (const std::string& piece : pieces) ids.push_back(vocab_.Find(piece).value_or(unk_id_));
  ids.push_back(eos_id_);
  return ids;
}

std::vector<Segment> Tokenizer::SourcePieceSpans(absl::string_view text) const {
  std::vector<Segment> spans;
  Pieces(*source_, vocab_, text, &spans);
  return spans;
}

std::string Tokenizer::DecodeTarget(absl::Span<const int> ids) const {
  std::vector<std::string> pieces;
  pieces.reserve(ids.size());
  for (const int id : ids) {
    // HF decode(skip_special_tokens=True): eos, pad and unk are the special tokens.
    if (id == eos_id_ || id == pad_id_ || id == unk_id_) continue;
    const std::string& piece = vocab_.Piece(id);
    if (piece.empty()) continue;
    pieces.push_back(piece);
  }
  std::string text;
  if (!target_->Decode(pieces, text)) return "";
  // SentencePiece passes pieces it does not know (source-side pieces of the joint vocabulary)
  // through verbatim, "▁" included; HF turns those into spaces. HF's final str.strip() is not
  // copied: the golden HF output keeps trailing spaces (e.g. "É    " on en-pt-tc-big).
  absl::StrReplaceAll({{"\xE2\x96\x81", " "}}, &text);
  return text;
}

}  // namespace mtserve
