#!/usr/bin/env python3
"""scripts/lib/glossary_terms.py: whole-word occurrences of a source term (strict and loose
bounds), target forms counted in a translation (as written; the first letter's case changed at a
sentence start only; longer forms first, no overlap), the API's sentence ranges in bytes turned
into character offsets, and which entries a translation leaves unmet.

Usage: glossary_terms_test.py [unittest arguments]
"""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts/lib"))
from glossary_terms import (entry_counts, form_count, sentence_starts_from_ranges,  # noqa: E402
                            source_spans, unmet_entries)


class SourceSpansTest(unittest.TestCase):
    def test_whole_words_as_written(self):
        self.assertEqual(source_spans("A dog and a dog.", "dog"), [(2, 5), (12, 15)])
        self.assertEqual(source_spans("Dogs and hotdogs.", "dog"), [])
        self.assertEqual(source_spans("Dog.", "dog"), [])
        self.assertEqual(source_spans("in front of it", "in front of"), [(0, 11)])

    def test_apostrophes_and_hyphens_bound_loosely_only(self):
        self.assertEqual(source_spans("the dog's T-shirt", "dog"), [])
        self.assertEqual(source_spans("the dog's T-shirt", "dog", strict=False), [(4, 7)])
        self.assertEqual(source_spans("the dog's T-shirt", "shirt", strict=False), [(12, 17)])

    def test_terms_are_literal(self):
        self.assertEqual(source_spans("a.b axb", "a.b"), [(0, 3)])


class FormCountTest(unittest.TestCase):
    def test_as_written(self):
        self.assertEqual(form_count("Ein Mann und ein Mann.", ["Mann"]), 2)
        self.assertEqual(form_count("Ein mann.", ["Mann"]), 0)
        self.assertEqual(form_count("Die Männer.", ["Mann"]), 0)

    def test_any_form_counts_and_longer_forms_first(self):
        self.assertEqual(form_count("Ein Fahrrad und ein Rad.", ["Rad", "Fahrrad"]), 2)
        self.assertEqual(form_count("immer noch", ["immer noch", "noch"]), 1)

    def test_the_first_letters_case_at_a_sentence_start(self):
        self.assertEqual(form_count("Zwei Hunde.", ["zwei"]), 1)
        self.assertEqual(form_count("Hier. Zwei Hunde.", ["zwei"]), 1)
        self.assertEqual(form_count("Die Zwei.", ["zwei"]), 0)
        self.assertEqual(form_count("mann.", ["Mann"]), 1)
        # Sentence starts given (the API's ranges) replace the guess from punctuation.
        self.assertEqual(form_count("Hier Zwei Hunde", ["zwei"], sentence_starts={5}), 1)
        self.assertEqual(form_count("Hier. Zwei Hunde.", ["zwei"], sentence_starts={0}), 0)

    def test_no_forms(self):
        self.assertEqual(form_count("Ein Mann.", []), 0)


class RangesTest(unittest.TestCase):
    def test_byte_offsets_become_character_offsets(self):
        text = "Größe. Zwei."
        self.assertEqual(sentence_starts_from_ranges(
            text, [{"end": 8}, {"begin": 9, "end": 14}]), {0, 7})


class EntryTest(unittest.TestCase):
    def test_occurrences_and_hits(self):
        entry = {"source": "dog", "targets": ["Hund"]}
        self.assertEqual(entry_counts("A dog and a dog.", entry, "Ein Hund und ein Hund."), (2, 2))
        self.assertEqual(entry_counts("A dog and a dog.", entry, "Ein Hund und eine Katze."),
                         (2, 1))
        self.assertEqual(entry_counts("A dog.", entry, "Ein Hund, ein Hund."), (1, 1))
        self.assertEqual(entry_counts("A cat.", entry, "Ein Hund."), (0, 0))

    def test_unmet_entries(self):
        glossary = [{"source": "dog", "targets": ["Hund"]},
                    {"source": "man", "targets": ["Mann", "Herr"]}]
        self.assertEqual(unmet_entries("A man and his dog.", glossary, "Ein Herr und sein Hund."),
                         [])
        self.assertEqual(unmet_entries("A man and his dog.", glossary, "Ein Kerl und sein Hund."),
                         [(glossary[1], 1, 0)])


if __name__ == "__main__":
    unittest.main(verbosity=2)
