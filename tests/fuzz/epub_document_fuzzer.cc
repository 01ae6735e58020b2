// An EPUB's package document and XHTML (text/office/epub_package.h, epub_xhtml.h) taken apart
// and rendered, on the request threads' stack (tests/test_lib/request_thread_stack.h): the input
// is a package document, a NUL, then an XHTML document (also read as an NCX, and taken apart with
// and without spans kept as written). Any bytes are either refused with INVALID_ARGUMENT or taken
// apart; the manifest's entries stay inside the archive; every part accepted renders, around
// translations of another length holding the characters XML escapes, into XML that parses again.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/test_lib/fuzz_check.h"
#include "tests/test_lib/request_thread_stack.h"
#include "text/inline_spans.h"
#include "text/office/epub_package.h"
#include "text/office/epub_xhtml.h"

namespace {

// Each run "translated" longer, with markup characters, its spans placed by position.
std::vector<mtserve::TranslatedRun> Translations(const mtserve::PartRuns& part) {
  std::vector<mtserve::TranslatedRun> out;
  for (const mtserve::PartRuns::Run& run : part.runs()) {
    std::string text = absl::StrCat(run.text, " <&>\"' ]]> ", run.text);
    std::vector<mtserve::Segment> placed =
        mtserve::PlaceSpansByPosition(run.text, run.inlines, text);
    FUZZ_CHECK(placed.size() == run.inlines.size());
    out.push_back({std::move(text), std::move(placed)});
  }
  return out;
}

// `part` rendered parses as XML again.
void CheckRenders(const mtserve::PartRuns& part) {
  const std::string rendered = part.Render(Translations(part));
  const auto reparsed = mtserve::ParseEpubXml("rendered", rendered);
  if (!reparsed.ok()) {
    std::fprintf(stderr, "%s\n--- rendered:\n%s\n",
                 std::string(reparsed.status().message()).c_str(), rendered.c_str());
  }
  FUZZ_CHECK(reparsed.ok());
}

void FuzzOne(const std::string& input) {
  const size_t nul = input.find('\0');
  const std::string opf = nul == std::string::npos ? "" : input.substr(0, nul);
  const std::string xhtml = nul == std::string::npos ? input : input.substr(nul + 1);
  if (!opf.empty()) {
    const auto document = mtserve::TakeApartPackageDocument("OEBPS/content.opf", opf, "de");
    if (document.ok()) {
      CheckRenders(*document->runs);
      for (const auto* items : {&document->ncx, &document->xhtml}) {
        for (const auto& item : *items) {
          FUZZ_CHECK(!item.name.empty() && item.name[0] != '/');
          for (absl::string_view segment : absl::StrSplit(item.name, '/')) {
            FUZZ_CHECK(segment != ".." && segment != "." && !segment.empty());
          }
        }
      }
    } else {
      FUZZ_CHECK(absl::IsInvalidArgument(document.status()));
    }
    const auto container = mtserve::PackageDocumentName(opf);
    FUZZ_CHECK(container.ok() || absl::IsInvalidArgument(container.status()));
  }
  // As without a terminology, and as with one (inline elements not translated kept in their
  // runs, <x> listed as DeepL's ignore_tags list tags): each kept range is in its run's text, in
  // order.
  mtserve::HtmlOptions keeping;
  keeping.keep_inline = true;
  keeping.ignore_tags = {"x"};
  for (const mtserve::HtmlOptions& options : {mtserve::HtmlOptions(), keeping}) {
    const auto part = mtserve::TakeApartXhtml("OEBPS/ch1.xhtml", xhtml, "en", "de", options);
    if (!part.ok()) {
      FUZZ_CHECK(absl::IsInvalidArgument(part.status()));
      continue;
    }
    for (const mtserve::PartRuns::Run& run : (*part)->runs()) {
      size_t end = 0;
      for (const mtserve::Segment& kept : run.kept) {
        FUZZ_CHECK(end <= kept.begin && kept.begin < kept.end && kept.end <= run.text.size());
        end = kept.end;
      }
    }
    CheckRenders(**part);
  }
  const auto ncx = mtserve::TakeApartNcx("OEBPS/toc.ncx", xhtml, "en", "de");
  if (ncx.ok()) {
    CheckRenders(**ncx);
  } else {
    FUZZ_CHECK(absl::IsInvalidArgument(ncx.status()));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  mtserve::RunOnRequestThreadStack([&] { FuzzOne(input); });
  return 0;
}
