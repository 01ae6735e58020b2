// The one interface between mtserve and libsentencepiece, which lives in its own module
// (libmtserve_sentencepiece.so) loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND).
//
// Why: Debian's libsentencepiece carries its own copy of protobuf-lite 3.14 and exports its
// symbols. Linked into a process that also uses the system libprotobuf (gRPC does), one copy's
// symbols replace the other's and the process aborts at start-up. Loaded this way, the module and
// libsentencepiece bind to their own protobuf copy and nothing else sees it.
//
// Only standard-library types cross this boundary (the module does not use Abseil, whose
// string_view libsentencepiece's header redefines).
#ifndef MTSERVE_MODEL_SENTENCEPIECE_MODULE_H_
#define MTSERVE_MODEL_SENTENCEPIECE_MODULE_H_

#include <string>
#include <string_view>
#include <vector>

namespace mtserve {

// One loaded SentencePiece model.
class SentencePieceModel {
 public:
  virtual ~SentencePieceModel() = default;
  // Pieces of `text`; false only if the model is unusable.
  virtual bool Encode(std::string_view text, std::vector<std::string>& pieces) const = 0;
  // Text of `pieces`; pieces the model does not know pass through verbatim.
  virtual bool Decode(const std::vector<std::string>& pieces, std::string& text) const = 0;
};

// The module's entry point, found with dlsym: the model at `path`, or null with `error` set.
using LoadSentencePieceFn = SentencePieceModel* (*)(const char* path, std::string* error);
inline constexpr char kLoadSentencePieceSymbol[] = "MtserveLoadSentencePiece";
inline constexpr char kSentencePieceModuleName[] = "libmtserve_sentencepiece.so";

}  // namespace mtserve

#endif  // MTSERVE_MODEL_SENTENCEPIECE_MODULE_H_
