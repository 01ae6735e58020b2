#!/usr/bin/env python3
"""scripts/lib/bleu.py against values worked out by hand: mteval-v13a's tokens of sentences
with punctuation, numbers and dashes, clipped n-gram counts, corpus sums (not a mean of
sentences), the brevity penalty, and sacreBLEU's "exp" smoothing of an order with no match.

Usage: bleu_test.py [unittest arguments]
"""
import math
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts/lib"))
from bleu import corpus_bleu, corpus_statistics, tokenize_13a  # noqa: E402


class Tokenize13aTest(unittest.TestCase):
    def test_punctuation_is_split_off(self):
        self.assertEqual(tokenize_13a("Hello, world!"), ["Hello", ",", "world", "!"])
        self.assertEqual(tokenize_13a('Ein Mann sagt: "Hallo" (laut).'),
                         ["Ein", "Mann", "sagt", ":", '"', "Hallo", '"', "(", "laut", ")", "."])
        self.assertEqual(tokenize_13a("x/y & z"), ["x", "/", "y", "&", "z"])

    def test_periods_and_commas_between_digits_stay(self):
        self.assertEqual(tokenize_13a("It costs 1,000.50 dollars."),
                         ["It", "costs", "1,000.50", "dollars", "."])
        self.assertEqual(tokenize_13a("Mr. Smith, 3."), ["Mr", ".", "Smith", ",", "3", "."])

    def test_dashes_split_after_digits_only(self):
        self.assertEqual(tokenize_13a("A 5-year-old in a T-shirt"),
                         ["A", "5", "-", "year-old", "in", "a", "T-shirt"])

    def test_apostrophes_and_letters_beyond_ascii_stay(self):
        self.assertEqual(tokenize_13a("The girl's Straße"), ["The", "girl's", "Straße"])

    def test_whitespace_is_collapsed(self):
        self.assertEqual(tokenize_13a("  a\tb \n c "), ["a", "b", "c"])


class CorpusBleuTest(unittest.TestCase):
    def test_identical_corpus_scores_100(self):
        lines = ["Ein Mann fährt Fahrrad auf der Straße.", "Zwei Hunde spielen im Schnee."]
        self.assertAlmostEqual(corpus_bleu(lines, lines), 100.0)

    def test_one_sentence_shorter_than_its_reference(self):
        # 1-grams 4/5, 2-grams 3/4, 3-grams 2/3, 4-grams 1/2; 5 tokens against 6.
        expected = 100 * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25 * math.exp(1 - 6 / 5)
        self.assertAlmostEqual(corpus_bleu(["a b c d e"], ["a b c d f g"]), expected)

    def test_longer_than_the_reference_has_no_penalty(self):
        expected = 100 * (5 / 6 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25
        self.assertAlmostEqual(corpus_bleu(["a b c d e f"], ["a b c d e"]), expected)

    def test_counts_are_summed_over_the_corpus(self):
        # The second sentence alone has no 3-gram match; summed: 7/8, 4/6, 2/4, 1/2, 8 tokens each.
        expected = 100 * (7 / 8 * 4 / 6 * 2 / 4 * 1 / 2) ** 0.25
        self.assertAlmostEqual(corpus_bleu(["a b c d", "x y z w"], ["a b c d", "x y q w"]),
                               expected)

    def test_counts_are_clipped_by_the_reference(self):
        matches, totals, hypothesis_length, reference_length = corpus_statistics(
            ["the the the cat"], ["the cat the mat"])
        self.assertEqual(matches, [3, 1, 0, 0])  # "the" twice in the reference, then "cat".
        self.assertEqual(totals, [4, 3, 2, 1])
        self.assertEqual((hypothesis_length, reference_length), (4, 4))

    def test_punctuation_counts_as_tokens(self):
        # "Mann." and "Mann ." are the same tokens; "Hund" against "Hunde" is not.
        self.assertAlmostEqual(corpus_bleu(["Ein Mann. Ein Hund."], ["Ein Mann . Ein Hund ."]),
                               100.0)
        # 1-grams 5/6, 2-grams 3/5, 3-grams 2/4, 4-grams 1/3 ("Ein Mann . Ein").
        expected = 100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
        self.assertAlmostEqual(corpus_bleu(["Ein Mann. Ein Hund."], ["Ein Mann. Ein Hunde."]),
                               expected)

    def test_an_order_without_match_is_smoothed(self):
        # 1-grams 4/5, 2-grams 2/4, 3-grams 1/3, 4-grams 0 of 2: 1 / (2 * 2).
        expected = 100 * (4 / 5 * 2 / 4 * 1 / 3 * 1 / (2 * 2)) ** 0.25
        self.assertAlmostEqual(corpus_bleu(["a b c d e"], ["a b c x e"]), expected)

    def test_no_four_gram_scores_zero(self):
        self.assertEqual(corpus_bleu(["Ein Mann."], ["Ein Mann."]), 0.0)
        self.assertEqual(corpus_bleu([""], ["Ein Mann ."]), 0.0)

    def test_unequal_lengths_are_refused(self):
        with self.assertRaises(ValueError):
            corpus_bleu(["a"], ["a", "b"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
