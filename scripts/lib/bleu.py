"""Corpus BLEU as sacreBLEU computes it by default: the "13a" tokenisation (mteval-v13a), n-grams
up to 4 with uniform weights, clipped counts, the brevity penalty and "exp" smoothing (an order
with no match at all counts 1 / (2^k * its n-grams), k = 1, 2... for each such order: never the
case on a test set, where it equals the unsmoothed score), one reference per sentence. For the
benchmark scripts; tests/scripts/lib/bleu_test.py checks it against values computed by hand.
(tests/test_lib/bleu.h is the C++ tests' scorer, unsmoothed.)"""
import collections
import math
import re

_SYMBOLS = re.compile(r"([\{-\~\[-\` -\&\(-\+\:-\@\/])")
_PERIOD_COMMA_AFTER_NON_DIGIT = re.compile(r"([^0-9])([\.,])")
_PERIOD_COMMA_BEFORE_NON_DIGIT = re.compile(r"([\.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")


def tokenize_13a(text):
    """The tokens of `text` (plain text: no markup or entities to undo) by the 13a rules:
    punctuation and symbols split off, except periods and commas between digits, and dashes
    except after a digit."""
    text = f" {text} "
    text = _SYMBOLS.sub(r" \1 ", text)
    text = _PERIOD_COMMA_AFTER_NON_DIGIT.sub(r"\1 \2 ", text)
    text = _PERIOD_COMMA_BEFORE_NON_DIGIT.sub(r" \1 \2", text)
    text = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", text)
    return text.split()


def _ngrams(tokens, n):
    return collections.Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def corpus_statistics(hypotheses, references):
    """(matches[4], totals[4], hypothesis length, reference length) summed over the corpus:
    matches[n-1] counts the hypotheses' n-grams found in their references (each reference n-gram
    used at most as often as it occurs), totals[n-1] all their n-grams."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    matches, totals = [0] * 4, [0] * 4
    hypothesis_length = reference_length = 0
    for hypothesis, reference in zip(hypotheses, references):
        h, r = tokenize_13a(hypothesis), tokenize_13a(reference)
        hypothesis_length += len(h)
        reference_length += len(r)
        for n in range(1, 5):
            found, wanted = _ngrams(h, n), _ngrams(r, n)
            matches[n - 1] += sum(min(count, wanted[gram]) for gram, count in found.items())
            totals[n - 1] += max(0, len(h) - n + 1)
    return matches, totals, hypothesis_length, reference_length


def corpus_bleu(hypotheses, references):
    """BLEU (0-100) of the hypotheses against their references, one reference each; 0 when the
    hypotheses hold no 4-gram at all."""
    matches, totals, hypothesis_length, reference_length = corpus_statistics(hypotheses,
                                                                             references)
    if totals[3] == 0:
        return 0.0
    log_precision, halving = 0.0, 1
    for m, t in zip(matches, totals):
        if m == 0:
            halving *= 2
            log_precision += math.log(1 / (halving * t)) / 4
        else:
            log_precision += math.log(m / t) / 4
    brevity = min(0.0, 1 - reference_length / hypothesis_length)
    return 100 * math.exp(log_precision + brevity)
