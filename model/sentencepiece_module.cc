// libmtserve_sentencepiece.so: SentencePieceModel on libsentencepiece (see
// sentencepiece_module.h for why this is a module of its own).
#include "model/sentencepiece_module.h"

#include <sentencepiece_processor.h>

namespace mtserve {
namespace {

class Processor : public SentencePieceModel {
 public:
  bool Load(const char* path, std::string& error) {
    const sentencepiece::util::Status status = processor_.Load(path);
    if (!status.ok()) error = status.ToString();
    return status.ok();
  }
  bool Encode(std::string_view text, std::vector<std::string>& pieces) const override {
    return processor_.Encode(text, &pieces).ok();
  }
  bool EncodeWithSpans(std::string_view text, std::vector<std::string>& pieces,
                       std::vector<std::pair<size_t, size_t>>& spans) const override {
    const sentencepiece::ImmutableSentencePieceText encoded =
        processor_.EncodeAsImmutableProto(text);
    pieces.clear();
    spans.clear();
    for (size_t i = 0; i < encoded.pieces_size(); ++i) {
      const auto piece = encoded.pieces(static_cast<int>(i));
      pieces.push_back(piece.piece());
      spans.emplace_back(piece.begin(), piece.end());
    }
    return true;
  }
  bool Decode(const std::vector<std::string>& pieces, std::string& text) const override {
    return processor_.Decode(pieces, &text).ok();
  }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace
}  // namespace mtserve

extern "C" __attribute__((visibility("default"))) mtserve::SentencePieceModel*
MtserveLoadSentencePiece(const char* path, std::string* error) {
  auto* processor = new mtserve::Processor();
  if (!processor->Load(path, *error)) {
    delete processor;
    return nullptr;
  }
  return processor;
}
