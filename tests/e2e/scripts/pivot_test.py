#!/usr/bin/env python3
"""Pivot translation on a real mtserve serving the three trained models (en-de, de-en, fr-en)
of the repository's models/ through --model_dir: French into German, which no model translates,
goes through English (multi30k-fr-en, then multi30k-en-de) and equals the two legs asked for by
name (the second with split_sentences false), over HTTP's /v1/translate, LibreTranslate's
/translate and mttranslate; a text of several sentences keeps its layout and sentence ranges;
inline HTML markup lands on the word aligned through the bridge; "auto" into German detects a
French text and pivots; /languages lists fr -> de; with a --model_memory that holds one of the
two models, a pivot is refused at once; a glossary's French term is written in German on the last
leg, a placeholder kept through both, as mttranslate does it, where en-de translates the English
word fr-en translated the term's source into.

Usage: pivot_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402

# Line 2 of Multi30k's test_2016_flickr in French, and two short sentences.
FRENCH = "Un terrier de Boston court sur l'herbe verdoyante devant une clôture blanche."
SHORT = ["Un homme court.", "Une femme chante."]


class PivotTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server_flags = ("--workers=1", f"--model_dir={e2e_suite.ARGS.models_dir}")
        super().setUpClass()

    def translate(self, body):
        status, _, answer = call(self.server.http_port, "POST", "/v1/translate", body)
        self.assertEqual(status, 200, answer)
        return json.loads(answer)

    def by_hand(self, text):
        """`text` by multi30k-fr-en, then its translation by multi30k-en-de as one sentence."""
        english = self.translate({"model": "multi30k-fr-en", "texts": [text]})
        english = english["translations"][0]["hypotheses"][0]["text"]
        german = self.translate({"model": "multi30k-en-de", "texts": [english],
                                 "options": {"split_sentences": False}})
        return german["translations"][0]["hypotheses"][0]["text"]

    def test_french_into_german_equals_the_two_legs(self):
        answer = self.translate({"texts": [FRENCH], "source_language": "fr",
                                 "target_language": "de"})
        self.assertEqual(answer["model"], "multi30k-fr-en+multi30k-en-de")
        translation = answer["translations"][0]
        self.assertEqual(translation["model"], "multi30k-fr-en+multi30k-en-de")
        self.assertEqual(translation["hypotheses"][0]["text"], self.by_hand(FRENCH))

    def test_auto_into_german_detects_french_and_pivots(self):
        answer = self.translate({"texts": [FRENCH], "source_language": "auto",
                                 "target_language": "de"})
        translation = answer["translations"][0]
        self.assertEqual(translation["detected_language"]["language"], "fr")
        self.assertEqual(translation["hypotheses"][0]["text"], self.by_hand(FRENCH))

    def test_sentences_keep_their_layout_and_ranges(self):
        text = SHORT[0] + "\n\n" + SHORT[1]
        answer = self.translate({"texts": [text], "source_language": "fr",
                                 "target_language": "de"})
        best = answer["translations"][0]["hypotheses"][0]
        expected = [self.by_hand(s) for s in SHORT]
        self.assertEqual(best["text"], expected[0] + "\n\n" + expected[1])
        self.assertEqual(len(answer["translations"][0]["sentences"]), 2)

    def test_inline_markup_lands_on_the_word_aligned_through_the_bridge(self):
        # Each leg's alignment by hand: "homme" -> "man" -> "Mann".
        self.assertEqual(self.by_hand("Un homme court."), "Ein Mann rennt.")
        answer = self.translate({"texts": ["<p>Un <b>homme</b> court.</p>"],
                                 "source_language": "fr", "target_language": "de",
                                 "options": {"format": "TEXT_FORMAT_HTML"}})
        self.assertEqual(answer["translations"][0]["hypotheses"][0]["text"],
                         "<p>Ein <b>Mann</b> rennt.</p>")

    def test_libretranslate_translates_and_lists_the_pivot(self):
        status, _, body = call(self.server.http_port, "POST", "/translate", json.dumps(
            {"q": FRENCH, "source": "fr", "target": "de"}), {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["translatedText"], self.by_hand(FRENCH))
        status, _, body = call(self.server.http_port, "GET", "/languages")
        self.assertEqual(status, 200, body)
        targets = {language["code"]: language["targets"] for language in json.loads(body)}
        self.assertEqual(targets, {"de": ["en"], "en": ["de"], "fr": ["de", "en"]})

    def test_mttranslate_pivots_as_the_server_does(self):
        models = e2e_suite.ARGS.models_dir
        lines = [FRENCH, SHORT[0] + " " + SHORT[1]]
        out = subprocess.run(
            [os.path.join(e2e_suite.ARGS.bin_dir, "mttranslate"),
             f"--model={models}/multi30k-fr-en,{models}/multi30k-en-de", "--source=fr",
             "--target=de"], input="\n".join(lines) + "\n", capture_output=True, text=True,
            check=True, timeout=120)
        served = self.translate({"texts": lines, "source_language": "fr",
                                 "target_language": "de"})
        self.assertEqual(out.stdout.splitlines(),
                         [t["hypotheses"][0]["text"] for t in served["translations"]])
        self.assertEqual(out.stdout.splitlines()[0], self.by_hand(FRENCH))

    def test_terms_are_written_on_the_leg_into_german(self):
        # A French source term and a German form the models would not write; a placeholder the
        # vocabularies lack kept as written through both legs.
        text = "Un homme court vers {lieu}."
        answer = self.translate({"texts": [text], "source_language": "fr", "target_language": "de",
                                 "options": {"glossary": [{"source": "homme",
                                                           "targets": ["Zorblaxer"]}],
                                             "keep_patterns": ["KEEP_PATTERN_PLACEHOLDERS"],
                                             "beam_size": 4, "num_hypotheses": 2}})
        hypotheses = answer["translations"][0]["hypotheses"]
        self.assertEqual(len(hypotheses), 2)
        for hypothesis in hypotheses:
            self.assertIn("Zorblaxer", hypothesis["text"])
            self.assertIn("{lieu}", hypothesis["text"])
        self.assertNotIn("Zorblaxer", self.by_hand(text))
        # mttranslate pivots the same way.
        result = subprocess.run(
            [e2e_suite.binary("mttranslate"), "--threads=1", "--beam_size=4", "--source=fr",
             "--target=de", "--keep_patterns=placeholders", f"--glossary={self.glossary_file()}",
             *(f"--model={e2e_suite.ARGS.models_dir}/{m}"
               for m in ("multi30k-fr-en", "multi30k-en-de"))],
            input=text + "\n", capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, hypotheses[0]["text"] + "\n")

    def glossary_file(self, source="homme"):
        path = os.path.join(self.temp_dir(), f"{source}.tsv")
        with open(path, "w") as f:
            f.write(f"{source}\tZorblaxer\n")
        return path

    def test_a_term_goes_where_the_first_leg_translated_its_source(self):
        # fr-en writes "hat" for "chapeau": the German term for "chapeau" is written where en-de
        # translates "hat", as en-de asked by name places it with "hat" as the glossary's source
        # (after "Mann", the translation of "homme", which comes before "chapeau"; placed without
        # the first leg's alignment it came first: "Ein Zorblaxer Mann mit ...").
        text = "Un homme avec un chapeau orange regardant quelque chose."
        english = self.translate({"model": "multi30k-fr-en", "texts": [text]})
        english = english["translations"][0]["hypotheses"][0]["text"]
        self.assertEqual(english, "A man in an orange hat looking at something.")
        by_name = self.translate({"model": "multi30k-en-de", "texts": [english],
                                  "options": {"split_sentences": False,
                                              "glossary": [{"source": "hat",
                                                            "targets": ["Zorblaxer"]}]}})
        expected = by_name["translations"][0]["hypotheses"][0]["text"]
        answer = self.translate({"texts": [text], "source_language": "fr", "target_language": "de",
                                 "options": {"glossary": [{"source": "chapeau",
                                                           "targets": ["Zorblaxer"]}]}})
        got = answer["translations"][0]["hypotheses"][0]["text"]
        self.assertEqual(got, expected)
        self.assertLess(got.index("Mann"), got.index("Zorblaxer"), got)
        # mttranslate pivots the same way.
        result = subprocess.run(
            [e2e_suite.binary("mttranslate"), "--threads=1", "--source=fr", "--target=de",
             f"--glossary={self.glossary_file('chapeau')}",
             *(f"--model={e2e_suite.ARGS.models_dir}/{m}"
               for m in ("multi30k-fr-en", "multi30k-en-de"))],
            input=text + "\n", capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, got + "\n")

    def test_a_budget_too_small_for_both_legs_is_refused_at_once(self):
        # Room for one of the models (each about 32 MiB in float32): both legs of a pivot are held
        # at once, so it could never run (docs/api.md, "Pivot translation"). Refused at once, with
        # nothing loaded; each leg by name still translates, one model at a time.
        server = self.start_mtserve("--workers=1", f"--model_dir={e2e_suite.ARGS.models_dir}",
                                    "--model_memory=40MiB")
        self.assertErrorAnswer(
            call(server.http_port, "POST", "/v1/translate",
                 {"texts": [FRENCH], "source_language": "fr", "target_language": "de"}),
            400, "FAILED_PRECONDITION", "multi30k-fr-en", "multi30k-en-de", "--model_memory=40MiB")
        for name in ("multi30k-fr-en", "multi30k-en-de"):
            self.assertNotIn(f"mtserve: model {name} (", server.stderr(), "loaded")
        status, _, body = call(server.http_port, "POST", "/v1/translate",
                               {"model": "multi30k-fr-en", "texts": [FRENCH]})
        self.assertEqual(status, 200, body)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
