// A range of bytes of a text: a sentence, or a piece of one.
#ifndef MTSERVE_MODEL_TEXT_SEGMENT_H_
#define MTSERVE_MODEL_TEXT_SEGMENT_H_

#include <cstddef>

namespace mtserve {

struct Segment {
  size_t begin = 0;
  size_t end = 0;  // One past the last byte.
  bool operator==(const Segment& other) const { return begin == other.begin && end == other.end; }
};

}  // namespace mtserve

#endif  // MTSERVE_MODEL_TEXT_SEGMENT_H_
