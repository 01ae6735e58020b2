// An HTML text through HtmlDocument (gumbo), as the core takes a TEXT_FORMAT_HTML text apart and
// rebuilds it around the translations of its runs: any bytes parse, every run and inline lies
// inside what it belongs to, and the document renders around translations of another length.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/test_lib/fuzz_check.h"
#include "text/html_document.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string html(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<mtserve::HtmlDocument> document = mtserve::HtmlDocument::Parse(html);
  if (!document.ok()) return 0;  // Documented as never seen; not a crash.
  std::vector<mtserve::HtmlDocument::Translated> translated;
  size_t previous_end = 0;
  for (const mtserve::HtmlDocument::Run& run : document->runs()) {
    FUZZ_CHECK(run.source.begin >= previous_end && run.source.begin <= run.source.end &&
               run.source.end <= size);
    previous_end = run.source.end;
    for (size_t i = 0; i < run.inlines.size(); ++i) {
      const mtserve::HtmlDocument::Inline& in = run.inlines[i];
      FUZZ_CHECK(in.range.begin <= in.range.end && in.range.end <= run.text.size());
      FUZZ_CHECK(in.parent >= -1 && in.parent < static_cast<int>(i));
    }
    // A "translation" twice as long as the source, as a translation may be.
    std::string text = absl::StrCat(run.text, " ", run.text);
    std::vector<mtserve::Segment> placed = mtserve::HtmlDocument::PlaceByPosition(run, text);
    FUZZ_CHECK(placed.size() == run.inlines.size());
    for (const mtserve::Segment& s : placed) FUZZ_CHECK(s.begin <= s.end && s.end <= text.size());
    translated.push_back({std::move(text), std::move(placed)});
  }
  const std::string rendered = document->Render(translated);
  // The output parses, unless the nesting or attribute limit refuses it: both are estimated from
  // the tags before parsing, and rendering can move tags that the estimate read differently
  // (markup inside malformed tags, bogus comments), so a document near a limit can come out just
  // over it.
  const absl::Status reparsed = mtserve::HtmlDocument::Parse(rendered).status();
  FUZZ_CHECK(reparsed.ok() || (absl::IsInvalidArgument(reparsed) &&
                               (absl::StrContains(reparsed.message(), "nests elements") ||
                                absl::StrContains(reparsed.message(), "attributes"))));
  return 0;
}
