// A DOCX's word/document.xml through the WordprocessingML run engine (text/office/ooxml_runs.h),
// as PrepareDocx takes each text part apart and renders it: the checks of
// tests/test_lib/ooxml_fuzz_check.h, on a server thread's stack. Seeds: the document parts of
// tests/data/office's DOCX files (tools/make_office_fixtures.py) and hand-written ones.
#include <cstddef>
#include <cstdint>

#include "tests/test_lib/ooxml_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mtserve::CheckOoxmlPart("word/document.xml",
                          absl::string_view(reinterpret_cast<const char*>(data), size),
                          mtserve::OoxmlDialect::kWordprocessing);
  return 0;
}
