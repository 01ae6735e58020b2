// A text's translation as text/ joins it from its sentences' (text/document.h): the engine's
// hypotheses made one per text, and where the text's sentences lie in it and in each hypothesis.
// The engine knows sentences, not texts: these ranges are text/'s, never model/'s.
#ifndef MTSERVE_TEXT_TEXT_TRANSLATION_H_
#define MTSERVE_TEXT_TEXT_TRANSLATION_H_

#include <vector>

#include "base/segment.h"
#include "model/decoding/hypothesis.h"

namespace mtserve {

struct TextTranslation {
  // Best first: hypothesis k joins each sentence's k-th best. Its ids, token log-probabilities and
  // alignment are the sentences' in order, its log_prob and score their sums.
  std::vector<Hypothesis> hypotheses;
  int source_tokens = 0;  // Including each sentence's </s>.
  // A plain text's sentences: their bytes in the text, in order (other formats: none).
  std::vector<Segment> sentences;
  // hypothesis_sentences[k]: where each sentence's translation lies in hypotheses[k].text, in the
  // order of `sentences` (other formats: none).
  std::vector<std::vector<Segment>> hypothesis_sentences;
  // dropped[k]: runs of characters the model cannot spell that hypotheses[k] does not hold
  // (text/unknown_runs.h), as bytes of the text (an HTML document's bytes that hold them), and
  // text its format kept untranslated (a Markdown block whose markup could not be mapped back to
  // its bytes: text/markdown_document.h), in order; num_hypotheses entries, each empty for most
  // texts.
  std::vector<std::vector<Segment>> dropped;
};

}  // namespace mtserve

#endif  // MTSERVE_TEXT_TEXT_TRANSLATION_H_
