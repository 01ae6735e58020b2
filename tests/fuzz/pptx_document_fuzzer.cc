// A PPTX's slide through the DrawingML run engine (text/office/ooxml_runs.h), as PreparePptx takes
// each slide and notes part apart and renders it: the checks of tests/test_lib/ooxml_fuzz_check.h,
// on a server thread's stack. Seeds: slides of tests/data/office's PPTX files
// (tools/make_office_fixtures.py) and hand-written ones.
#include <cstddef>
#include <cstdint>

#include "tests/test_lib/ooxml_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  mtserve::CheckOoxmlPart("ppt/slides/slide1.xml",
                          absl::string_view(reinterpret_cast<const char*>(data), size),
                          mtserve::OoxmlDialect::kDrawing);
  return 0;
}
