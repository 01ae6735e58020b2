// The one interface between mtserve and libsentencepiece, which lives in its own module
// (libmtserve_sentencepiece.so) loaded with dlopen(RTLD_LOCAL).
//
// Why: Debian's libsentencepiece carries its own copy of protobuf-lite 3.14 and exports its
// symbols. Linked into a process that also uses the system libprotobuf (gRPC does), one copy's
// symbols replace the other's and the process aborts at start-up. Two things keep them apart:
// - RTLD_LOCAL: the module's and libsentencepiece's symbols stay out of the global scope, so
//   libprotobuf and everything else keep binding to their own.
// - The module links a private copy of libsentencepiece made at build time
//   (tools/make_symbolic_library.cc): DF_SYMBOLIC set, so the loader resolves its
//   references to its own protobuf in itself first (what `ld -Bsymbolic` gives), and a soname of
//   its own (libspm_symbolic.so.0, found through the module's RUNPATH $ORIGIN) so that the
//   system library is never loaded in its place.
// RTLD_DEEPBIND did the second job before; it put libsentencepiece's whole dependency tree
// before the global scope, so malloc and free in libsentencepiece bound to libc's, not to a
// sanitizer's replacements (strings and vectors allocated on one side are freed on the other),
// and AddressSanitizer and ThreadSanitizer refuse it. DF_SYMBOLIC only puts the library itself
// first: what it does not define (malloc, the C++ runtime) still comes from the global scope,
// in every build.
//
// Only standard-library types cross this boundary (the module does not use Abseil, whose
// string_view libsentencepiece's header redefines).
#ifndef MTSERVE_MODEL_SENTENCEPIECE_MODULE_H_
#define MTSERVE_MODEL_SENTENCEPIECE_MODULE_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mtserve {

// One loaded SentencePiece model.
class SentencePieceModel {
 public:
  virtual ~SentencePieceModel() = default;
  // Pieces of `text`; false only if the model is unusable.
  virtual bool Encode(std::string_view text, std::vector<std::string>& pieces) const = 0;
  // Pieces of `text` with the bytes of `text` each came from ([begin, end), as SentencePiece
  // maps them back through its normalisation); false only if the model is unusable.
  virtual bool EncodeWithSpans(std::string_view text, std::vector<std::string>& pieces,
                               std::vector<std::pair<size_t, size_t>>& spans) const = 0;
  // Text of `pieces`; pieces the model does not know pass through verbatim.
  virtual bool Decode(const std::vector<std::string>& pieces, std::string& text) const = 0;
};

// The module's entry point, found with dlsym: the model at `path`, or null with `error` set.
using LoadSentencePieceFn = SentencePieceModel* (*)(const char* path, std::string* error);
inline constexpr char kLoadSentencePieceSymbol[] = "MtserveLoadSentencePiece";
inline constexpr char kSentencePieceModuleName[] = "libmtserve_sentencepiece.so";

}  // namespace mtserve

#endif  // MTSERVE_MODEL_SENTENCEPIECE_MODULE_H_
