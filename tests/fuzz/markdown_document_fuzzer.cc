// A Markdown text through MarkdownDocument (md4c and our mapping of its events back to bytes), as
// the core takes a TEXT_FORMAT_MARKDOWN text apart and rebuilds it around the translations of its
// runs, on the stack of a request thread: any bytes parse or get a limit's error; every run and
// span lies inside what it belongs to; the document rendered around its runs' own texts with their
// spans where they were (an identity translation) is the input byte for byte (if UTF-8); it
// renders around translations of another length, and around translations ending in every
// character that can be Markdown syntax, the output parsing again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/markdown_document.h"
#include "text/utf8.h"

namespace {

void Check(const std::string& markdown) {
  const absl::StatusOr<mtserve::MarkdownDocument> document =
      mtserve::MarkdownDocument::Parse(markdown);
  if (!document.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(document.status()));
    return;
  }
  std::vector<mtserve::TranslatedRun> identity, doubled, marked;
  size_t previous_end = 0;
  for (const mtserve::MarkdownDocument::Run& run : document->runs()) {
    FUZZ_CHECK(run.source.begin >= previous_end && run.source.begin <= run.source.end &&
               run.source.end <= markdown.size());
    previous_end = run.source.end;
    mtserve::TranslatedRun same{run.text, {}};
    for (size_t i = 0; i < run.inlines.size(); ++i) {
      const mtserve::InlineSpan& in = run.inlines[i];
      FUZZ_CHECK(in.range.begin <= in.range.end && in.range.end <= run.text.size());
      FUZZ_CHECK(in.parent >= -1 && in.parent < static_cast<int>(i));
      same.inlines.push_back(in.range);
    }
    for (const mtserve::MarkdownDocument::Break& b : run.breaks) {
      FUZZ_CHECK(b.text < run.text.size() && run.text[b.text] == ' ');
      FUZZ_CHECK(b.source.begin <= b.source.end && b.source.end <= run.source.end);
    }
    // The model's words with syntax after the run's own (its spans where they were).
    marked.push_back({absl::StrCat(run.text, " *_`[]<>\\ # ~| = 1. -"), same.inlines});
    identity.push_back(std::move(same));
    // A "translation" twice as long as the source, as a translation may be.
    std::string text = absl::StrCat(run.text, " ", run.text);
    std::vector<mtserve::Segment> placed =
        mtserve::PlaceSpansByPosition(run.text, run.inlines, text);
    FUZZ_CHECK(placed.size() == run.inlines.size());
    for (const mtserve::Segment& s : placed) FUZZ_CHECK(s.begin <= s.end && s.end <= text.size());
    doubled.push_back({std::move(text), std::move(placed)});
  }
  // The core checks a text is UTF-8 before taking it apart (markup is placed on character
  // boundaries): other bytes must parse, not round-trip.
  const bool utf8 = mtserve::IsValidUtf8(markdown);
  FUZZ_CHECK(document->Render(identity) == markdown || !utf8);
  // A rendering around escaped translations must parse. That it makes the source's structure is
  // the unit tests' check (tests/text/markdown_document_test.cc, each case the fuzzer found and
  // was fixed): the fuzzer still finds inputs where it does not (docs/api.md says which).
  if (utf8) {
    const absl::Status reread = mtserve::MarkdownDocument::Parse(document->Render(marked)).status();
    FUZZ_CHECK(reread.ok() || absl::IsInvalidArgument(reread));
  }
  const std::string rendered = document->Render(doubled);
  const absl::Status reparsed = mtserve::MarkdownDocument::Parse(rendered).status();
  // Doubling a run's text may take a line or a table over a limit.
  FUZZ_CHECK(reparsed.ok() || absl::IsInvalidArgument(reparsed));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string markdown(reinterpret_cast<const char*>(data), size);
  // On the stack the server takes texts apart on (a request thread's, the smallest).
  mtserve::RunOnRequestThreadStack([&markdown] { Check(markdown); });
  return 0;
}
