// A byte range of a text: a sentence, or a piece of one (text/sentences.h puts their
// translations back into the text's layout).
#ifndef MTSERVE_BASE_SEGMENT_H_
#define MTSERVE_BASE_SEGMENT_H_

#include <cstddef>

namespace mtserve {

// A byte range [begin, end) of a text.
struct Segment {
  size_t begin = 0;
  size_t end = 0;
  bool operator==(const Segment& o) const { return begin == o.begin && end == o.end; }
};

}  // namespace mtserve

#endif  // MTSERVE_BASE_SEGMENT_H_
