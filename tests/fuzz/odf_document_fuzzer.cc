// An OpenDocument content.xml through text/office/odf_part.h, as PrepareOdf takes a document's
// parts apart and renders them, on the request threads' stack: any bytes are refused or taken
// apart into runs whose spans lie in their text; rendered around the source texts (the runs must
// come back as they were) and around translations of other lengths and word orders, the part
// parses again.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/inline_spans.h"
#include "text/office/odf_part.h"
#include "text/office/xml_part.h"

namespace {

using mtserve::OdfPart;

// Rendered XML is parsed again: as a part, unless rendering moved objects into spans past the
// nesting limit; and taken apart again.
void CheckRendered(const std::string& rendered) {
  const absl::Status reparsed = mtserve::ParseXmlPart("content.xml", rendered).status();
  FUZZ_CHECK(reparsed.ok() ||
             (absl::IsInvalidArgument(reparsed) && absl::StrContains(reparsed.message(), "nest")));
}

void TestOne(const std::string& xml) {
  const absl::StatusOr<OdfPart> part =
      OdfPart::TakeApart("content.xml", xml, OdfPart::Kind::kContent, "de-AT");
  if (!part.ok()) {
    FUZZ_CHECK(absl::IsInvalidArgument(part.status()));
    return;
  }
  std::vector<mtserve::TranslatedRun> same, shuffled;
  for (const mtserve::XmlInlineRuns::Run& run : part->runs()) {
    for (size_t i = 0; i < run.inlines.size(); ++i) {
      const mtserve::InlineSpan& in = run.inlines[i];
      FUZZ_CHECK(in.range.begin <= in.range.end && in.range.end <= run.text.size());
      FUZZ_CHECK(in.parent >= -1 && in.parent < static_cast<int>(i));
    }
    mtserve::TranslatedRun& t = same.emplace_back();
    t.text = run.text;
    for (const mtserve::InlineSpan& in : run.inlines) t.inlines.push_back(in.range);
    // Its words reversed and the first one doubled: another length, another order.
    std::vector<std::string> words = absl::StrSplit(run.text, ' ', absl::SkipEmpty());
    std::reverse(words.begin(), words.end());
    if (!words.empty()) words.push_back(words.back());
    mtserve::TranslatedRun& u = shuffled.emplace_back();
    u.text = absl::StrJoin(words, " ");
    u.inlines = mtserve::PlaceSpansByPosition(run.text, run.inlines, u.text);
  }
  const std::string rendered = part->Render(same);
  CheckRendered(rendered);
  const absl::StatusOr<OdfPart> again =
      OdfPart::TakeApart("content.xml", rendered, OdfPart::Kind::kContent, "de-AT");
  if (again.ok()) {
    // The source as its own translation gives the same runs back.
    FUZZ_CHECK(again->runs().size() == part->runs().size());
    for (size_t r = 0; r < part->runs().size(); ++r) {
      const std::string& before = part->runs()[r].text;
      const std::string& after = again->runs()[r].text;
      if (before != after) {
        std::fprintf(stderr, "run %zu: [%s] came back as [%s]\n", r, before.c_str(), after.c_str());
      }
      FUZZ_CHECK(before == after);
    }
  }
  CheckRendered(part->Render(shuffled));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string xml(reinterpret_cast<const char*>(data), size);
  mtserve::RunOnRequestThreadStack([&] { TestOne(xml); });
  return 0;
}
