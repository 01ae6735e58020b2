// The fuzz targets' check of an Office Open XML part (text/office/ooxml_runs.h), shared by the
// DOCX and PPTX targets: any bytes are taken apart or refused naming the part; every span lies
// in its run and its parent; the part rendered with its runs as their own translations parses and
// takes apart into the same texts; rendered around the runs' words reversed (spans placed by
// position, as where the alignment says nothing) it parses. All on a server thread's stack.
#ifndef MTSERVE_TESTS_TEST_LIB_OOXML_FUZZ_CHECK_H_
#define MTSERVE_TESTS_TEST_LIB_OOXML_FUZZ_CHECK_H_

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/office/ooxml_runs.h"
#include "text/office/xml_part.h"

namespace mtserve {

inline std::vector<std::string> RunTexts(const PartRuns& part) {
  std::vector<std::string> texts;
  for (const PartRuns::Run& run : part.runs()) texts.push_back(run.text);
  return texts;
}

inline void CheckOoxmlPart(absl::string_view name, absl::string_view bytes, OoxmlDialect dialect) {
  RunOnRequestThreadStack([&] {
    absl::StatusOr<std::unique_ptr<PartRuns>> part =
        TakeApartOoxmlPart(name, std::string(bytes), dialect, "de");
    if (!part.ok()) {
      FUZZ_CHECK(absl::IsInvalidArgument(part.status()) &&
                 absl::StrContains(part.status().message(), name));
      return;
    }
    std::vector<TranslatedRun> same, reversed;
    for (const PartRuns::Run& run : (*part)->runs()) {
      TranslatedRun& t = same.emplace_back();
      t.text = run.text;
      for (size_t i = 0; i < run.inlines.size(); ++i) {
        const InlineSpan& span = run.inlines[i];
        FUZZ_CHECK(span.range.begin <= span.range.end && span.range.end <= run.text.size());
        FUZZ_CHECK(span.parent >= -1 && span.parent < static_cast<int>(i));
        if (span.parent >= 0) {
          const Segment outer = run.inlines[span.parent].range;
          FUZZ_CHECK(outer.begin <= span.range.begin && span.range.end <= outer.end);
        }
        t.inlines.push_back(span.range);
      }
      std::vector<std::string> words = absl::StrSplit(run.text, ' ');
      std::reverse(words.begin(), words.end());
      TranslatedRun& r = reversed.emplace_back();
      r.text = absl::StrJoin(words, " ");
      r.inlines = PlaceSpansByPosition(run.text, run.inlines, r.text);
    }
    const std::string rendered = (*part)->Render(same);
    absl::StatusOr<std::unique_ptr<PartRuns>> again =
        TakeApartOoxmlPart(name, rendered, dialect, "de");
    FUZZ_CHECK(again.ok());
    if (RunTexts(**again) != RunTexts(**part)) {
      std::fprintf(stderr, "runs before:\n[%s]\nafter:\n[%s]\nrendered:\n%s\n",
                   absl::StrJoin(RunTexts(**part), "]\n[").c_str(),
                   absl::StrJoin(RunTexts(**again), "]\n[").c_str(), rendered.c_str());
    }
    FUZZ_CHECK(RunTexts(**again) == RunTexts(**part));
    FUZZ_CHECK((*again)->kept() == (*part)->kept());
    FUZZ_CHECK(ParseXmlPart(name, (*part)->Render(reversed)).ok());
  });
}

}  // namespace mtserve

#endif  // MTSERVE_TESTS_TEST_LIB_OOXML_FUZZ_CHECK_H_
