// The bounded in-flight window of a stream, defined once for every front end that streams (gRPC's
// TranslateStream, HTTP's /v1/translate:stream): a stream takes a text (reads it, hands it to the
// core) only while fewer than kMaxTexts of its texts are between being taken and their answer
// being written. So a long stream does not fill the queue alone, and a client that sends without
// reading its answers holds at most that many texts in the server: it is pushed back on (its
// sends wait) instead (docs/api.md: at most 64 texts of a stream in the queue at once).
#ifndef MTSERVE_SERVING_STREAM_WINDOW_H_
#define MTSERVE_SERVING_STREAM_WINDOW_H_

namespace mtserve {

// Not thread-safe: the stream guards it with its own lock.
class StreamWindow {
 public:
  static constexpr int kMaxTexts = 64;

  // Whether the stream may take one more text.
  bool HasRoom() const { return texts_ < kMaxTexts; }
  // A text was taken; its answer is not written yet.
  void Take() { ++texts_; }
  // A text's answer was written (or will never be).
  void Release() { --texts_; }
  // The texts taken whose answers are not written yet.
  int texts() const { return texts_; }

 private:
  int texts_ = 0;
};

}  // namespace mtserve

#endif  // MTSERVE_SERVING_STREAM_WINDOW_H_
