#!/usr/bin/python3
"""tools/make_glossary_benchmark.py: dictd entries written here in FreeDict's layout (labels,
genders, a glued abbreviation, examples, notes, synonyms, cross-references) parsed into their
German forms; a small dictd pair (base 64 index, gzip body) read back; the rules that choose a
line's entries; and Debian's real dictionary (dict-freedict-eng-deu, scripts/install-deps.sh)
on sentences whose terms a German reader knows.

Usage: make_glossary_benchmark_test.py [unittest arguments]
"""
import gzip
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../tools"))
import make_glossary_benchmark as tool  # noqa: E402

BIKE = """bike /bˈaɪk/
 [coll.] Fahrrad <neut>, Rad <neut>, Radl <neut> [Bayr.]  [Ös.] , Velo <neut> [Schw.]
      "an old bike"  - ein altes Fahrrad
   Synonyms: {bicycle}, {cycle}

 see: {bikes}, {folding bike}

"""
STREET = """street /stɹˈiːt/ (St /sˈənt/)
Straße <fem>Str.,  /ˌɛstˌiːˈɑː/
         Note: in der Stadt
      "in the street"  - auf der Straße
 see: {streets}

"""
RIDING = """riding /ɹˈaɪdɪŋ/
der Reitsport <masc>, jdm. etw. vorreiten, Reiten/Fahren (Sport), Ritt 2 <masc; fem> [sport]
"""
VERB = """hold /hˈəʊld/ <v>
halten, festhalten <v, trans>
 see: {holding}, {held}
"""


def write_dictd(directory, entries):
    """PREFIX of a dictd pair holding `entries` ((index headword, text), in order)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

    def number(n):
        digits = ""
        while True:
            digits = alphabet[n % 64] + digits
            n //= 64
            if n == 0:
                return digits

    prefix = os.path.join(directory, "test-eng-deu")
    body, rows = b"", []
    for headword, text in entries:
        data = text.encode("utf-8")
        rows.append(f"{headword}\t{number(len(body))}\t{number(len(data))}\n")
        body += data
    with open(prefix + ".index", "w", encoding="utf-8") as f:
        f.writelines(sorted(rows))
    with gzip.open(prefix + ".dict.dz", "wb") as f:
        f.write(body)
    return prefix


class ParseTest(unittest.TestCase):
    def test_labels_genders_and_regions_are_stripped(self):
        self.assertEqual(tool.parse_entry(BIKE), ("bike", ["Fahrrad", "Rad", "Radl", "Velo"]))

    def test_a_glued_abbreviation_and_notes_are_dropped(self):
        self.assertEqual(tool.parse_entry(STREET), ("street", ["Straße"]))

    def test_articles_placeholders_slashes_and_digits(self):
        self.assertEqual(tool.parse_entry(RIDING), ("riding", ["Reitsport"]))

    def test_verbs_and_cross_references(self):
        self.assertEqual(tool.parse_entry(VERB), ("hold", ["halten", "festhalten"]))

    def test_headwords_keep_their_case_and_spaces(self):
        self.assertEqual(tool.parse_headword("Red /ɹˈɛd/"), "Red")
        self.assertEqual(tool.parse_headword("ice cream /ˈaɪs kɹˈiːm/ <n>"), "ice cream")
        self.assertEqual(tool.parse_headword("T-shirt /tˈiː ʃˈɜːt/ (tee)"), "T-shirt")

    def test_index_numbers_are_base_64(self):
        self.assertEqual(tool.decode_number("A"), 0)
        self.assertEqual(tool.decode_number("b"), 27)
        self.assertEqual(tool.decode_number("BA"), 64)
        self.assertEqual(tool.decode_number("/+"), 63 * 64 + 62)

    def test_index_keys(self):
        self.assertEqual(tool.index_key("T-shirt"), "tshirt")
        self.assertEqual(tool.index_key("Ice  Cream"), "ice cream")


class ReadDictionaryTest(unittest.TestCase):
    def test_entries_of_one_headword_are_merged_and_others_not_read(self):
        with tempfile.TemporaryDirectory() as directory:
            prefix = write_dictd(directory, [
                ("bike", BIKE), ("street", STREET),
                ("bike", "bike /bˈaɪk/\nMotorrad <neut>, Rad <neut>\n"), ("hold", VERB)])
            got = tool.read_dictionary(prefix, {"bike", "hold"})
        self.assertEqual(dict(got), {"bike": ["Fahrrad", "Rad", "Radl", "Velo", "Motorrad"],
                                     "hold": ["halten", "festhalten"]})


class LineGlossaryTest(unittest.TestCase):
    def glossary(self, source, reference, translations):
        return tool.line_glossary(source, reference, translations)

    def test_entries_whose_translation_is_in_the_reference(self):
        got = self.glossary("A dog runs down the street.", "Ein Hund rennt die Straße hinunter.",
                            {"dog": ["Hund", "Rüde"], "street": ["Straße"], "run": ["rennen"]})
        self.assertEqual(got, [{"source": "dog", "targets": ["Hund"]},
                               {"source": "street", "targets": ["Straße"]}])

    def test_the_source_is_spelled_as_the_line_spells_it(self):
        got = self.glossary("Dogs run.", "Hunde rennen.", {"dogs": ["Hunde"]})
        self.assertEqual(got, [{"source": "Dogs", "targets": ["Hunde"]}])

    def test_two_spellings_in_one_line_keep_neither(self):
        got = self.glossary("Man and man.", "Mann und Mann.", {"man": ["Mann"]})
        self.assertEqual(got, [])

    def test_a_word_next_to_an_apostrophe_or_hyphen_is_left_out(self):
        translations = {"dog": ["Hund"], "shirt": ["Hemd"]}
        self.assertEqual(self.glossary("The dog's T-shirt.", "Das Hemd des Hund.", translations),
                         [])
        self.assertEqual(self.glossary("A dog, a dog's shirt.", "Ein Hund, ein Hemd.",
                                       translations),
                         [{"source": "shirt", "targets": ["Hemd"]}])

    def test_function_words_and_article_phrases_are_left_out(self):
        got = self.glossary("A woman in front of the house.", "Eine Frau vor dem Haus.",
                            {"in": ["in"], "the": ["das"], "a woman": ["eine Frau"],
                             "woman": ["Frau"], "in front of": ["vor"]})
        self.assertEqual(got, [{"source": "woman", "targets": ["Frau"]},
                               {"source": "in front of", "targets": ["vor"]}])

    def test_short_forms_are_left_out(self):
        got = self.glossary("It is an egg.", "Es ist ein Ei.", {"egg": ["Ei"]})
        self.assertEqual(got, [])

    def test_a_form_matches_whole_words_or_a_capital_at_a_sentence_start(self):
        translations = {"two": ["zwei"], "ball": ["Ball"]}
        self.assertEqual(self.glossary("Two balls.", "Zwei Fußbälle.", translations),
                         [{"source": "Two", "targets": ["zwei"]}])
        self.assertEqual(self.glossary("A ball.", "Ein Fußball.", translations), [])
        self.assertEqual(self.glossary("Look. Two men.", "Schau. Zwei Männer.", translations),
                         [{"source": "Two", "targets": ["zwei"]}])

    def test_longer_sources_win_overlaps(self):
        got = self.glossary("A tennis ball.", "Ein Tennisball, ein Ball.",
                            {"tennis ball": ["Tennisball"], "ball": ["Ball"]})
        self.assertEqual(got, [{"source": "tennis ball", "targets": ["Tennisball"]}])

    def test_a_form_is_given_to_one_entry_only(self):
        # Longer sources first: "fellow" takes "Mann", so "man" has no form of its own.
        got = self.glossary("A fellow and a man.", "Ein Kerl und ein Mann.",
                            {"man": ["Mann"], "fellow": ["Kerl", "Mann"]})
        self.assertEqual(got, [{"source": "fellow", "targets": ["Kerl", "Mann"]}])

    def test_at_most_eight_forms(self):
        forms = [f"Form{c}" for c in "abcdefghij"]
        got = self.glossary("A thing.", " ".join(forms), {"thing": forms})
        self.assertEqual(got, [{"source": "thing", "targets": forms[:8]}])


class MakeTest(unittest.TestCase):
    def test_one_object_per_line_or_the_first_lines_with_terms(self):
        with tempfile.TemporaryDirectory() as directory:
            prefix = write_dictd(directory, [("bike", BIKE), ("street", STREET)])
            sources = ["A bike.", "Nothing here.", "A street.", "A bike in the street."]
            references = ["Ein Fahrrad.", "Nichts.", "Eine Straße.", "Ein Rad auf der Straße."]
            every = tool.make(sources, references, prefix)
            first = tool.make(sources, references, prefix, max_lines=2)
        self.assertEqual(every, [
            {"line": 1, "glossary": [{"source": "bike", "targets": ["Fahrrad"]}]},
            {"line": 2, "glossary": []},
            {"line": 3, "glossary": [{"source": "street", "targets": ["Straße"]}]},
            {"line": 4, "glossary": [{"source": "bike", "targets": ["Rad"]},
                                     {"source": "street", "targets": ["Straße"]}]}])
        self.assertEqual(first, [every[0], every[2]])

    def test_debians_dictionary(self):
        self.assertTrue(os.path.exists(tool.DICTIONARY + ".index"),
                        "dict-freedict-eng-deu is not installed (scripts/install-deps.sh)")
        got = tool.make(["A man rides a bike down the street.", "Two dogs play in the snow."],
                        ["Ein Mann fährt mit dem Fahrrad die Straße hinunter.",
                         "Zwei Hunde spielen im Schnee."], tool.DICTIONARY)
        terms = [{e["source"]: e["targets"] for e in line["glossary"]} for line in got]
        self.assertEqual(terms[0].get("man"), ["Mann"])
        self.assertIn("Fahrrad", terms[0].get("bike", []))
        self.assertEqual(terms[0].get("street"), ["Straße"])
        self.assertEqual(terms[1].get("dogs"), ["Hunde"])
        self.assertEqual(terms[1].get("snow"), ["Schnee"])
        self.assertIn("zwei", [f.lower() for f in terms[1].get("Two", [])])


if __name__ == "__main__":
    unittest.main(verbosity=2)
