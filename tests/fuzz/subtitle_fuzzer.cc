// A subtitle file through SubtitleDocument, as the core takes a TEXT_FORMAT_SRT or
// TEXT_FORMAT_VTT text apart and rebuilds it, on the server's request threads' stack: any bytes
// parse as either kind or are refused; every cue, its text and its tags lie inside what they
// belong to; the file rebuilt around each cue's own text, and around its text translated as
// itself where no wrapping applies, is the input byte for byte; and text wrapped to narrow lines
// loses no character.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/subtitle_document.h"

namespace {

using mtserve::Segment;
using mtserve::SubtitleDocument;

size_t Visible(const std::string& s) {
  return std::count_if(s.begin(), s.end(),
                       [](char c) { return !absl::ascii_isspace(static_cast<unsigned char>(c)); });
}

void Check(const std::string& bytes, SubtitleDocument::Kind kind) {
  const absl::StatusOr<SubtitleDocument> document = SubtitleDocument::Parse(bytes, kind);
  if (!document.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(document.status()));
    return;
  }
  const std::string& stream = document->stream();
  std::vector<std::string> own, identity;
  size_t previous = 0, previous_text = 0;
  for (const SubtitleDocument::Cue& cue : document->cues()) {
    FUZZ_CHECK(cue.payload.begin >= previous && cue.payload.begin <= cue.payload.end &&
               cue.payload.end <= bytes.size());
    FUZZ_CHECK(cue.text.begin >= previous_text && cue.text.begin <= cue.text.end &&
               cue.text.end <= stream.size());
    previous = cue.payload.end;
    previous_text = cue.text.end;
    std::vector<Segment> placed;
    for (size_t i = 0; i < cue.inlines.size(); ++i) {
      const SubtitleDocument::Inline& in = cue.inlines[i];
      FUZZ_CHECK(in.range.begin >= cue.text.begin && in.range.begin <= in.range.end &&
                 in.range.end <= cue.text.end);
      FUZZ_CHECK(in.parent >= -1 && in.parent < static_cast<int>(i));
      placed.push_back({in.range.begin - cue.text.begin, in.range.end - cue.text.begin});
    }
    own.push_back(bytes.substr(cue.payload.begin, cue.payload.end - cue.payload.begin));
    const std::string text = stream.substr(cue.text.begin, cue.text.end - cue.text.begin);
    // Lines long and many enough that nothing is wrapped: the cue's own bytes.
    identity.push_back(document->CueText(cue, text, placed, {1 << 20, 1 << 20}));
    // A translation twice as long, on narrow lines: every character kept.
    const std::string twice = text + " " + text;
    const std::string wrapped = document->CueText(cue, twice, placed, {8, 2});
    FUZZ_CHECK(Visible(wrapped) >= Visible(twice));
  }
  FUZZ_CHECK(document->Render(own) == bytes);
  FUZZ_CHECK(document->Render(identity) == bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  mtserve::RunOnRequestThreadStack([&bytes] {
    Check(bytes, SubtitleDocument::Kind::kSrt);
    Check(bytes, SubtitleDocument::Kind::kVtt);
  });
  return 0;
}
