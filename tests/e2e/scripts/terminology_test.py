#!/usr/bin/env python3
"""Glossaries and kept spans as a user sends them, on a real mtserve with the embedded model:

- plain text over HTTP: every entry's form and every kept span in every hypothesis, and exactly
  what mttranslate --glossary/--keep/--keep_patterns writes for the same text;
- a stored glossary (POST /v1/glossaries) by glossary_id translates as the same entries inline;
- HTML keeps a term's markup around its form and a translate="no" span inside a sentence as
  written; Markdown and SubRip hold the forms too;
- the cache: a sentence translated with terms never answers the same sentence without them;
- refusals name the field and the limit: an unknown glossary_id (404), a keep_patterns value
  that names none, more terms than --max_request_terms, a form the vocabulary cannot read back.

Usage: terminology_test.py BIN_DIR STUBS_DIR [-- unittest arguments]
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary, call  # noqa: E402

TEXT = "A man rides a bike past the Zorblax tower. Write to {name} at https://example.com/help now."
GLOSSARY = [{"source": "bike", "targets": ["Zweirad"]}, {"source": "tower", "targets": ["Turm"]}]
KEEP = ["Zorblax"]
FORMS = ["Zweirad", "Turm", "Zorblax", "{name}", "https://example.com/help"]


class TerminologyTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server_flags = ("--workers=1", "--max_request_terms=4")
        super().setUpClass()

    def translate(self, texts, status=200, **options):
        code, _, answer = call(self.server.http_port, "POST", "/v1/translate",
                               {"texts": texts, "options": options})
        self.assertEqual(code, status, answer)
        return json.loads(answer)

    def terms(self, **more):
        return dict(glossary=GLOSSARY, keep=KEEP,
                    keep_patterns=["KEEP_PATTERN_PLACEHOLDERS", "KEEP_PATTERN_URLS"], **more)

    def test_every_hypothesis_holds_every_term_as_mttranslate_writes_it(self):
        answer = self.translate([TEXT], beam_size=4, num_hypotheses=3, **self.terms())
        hypotheses = answer["translations"][0]["hypotheses"]
        self.assertEqual(len(hypotheses), 3)
        for hypothesis in hypotheses:
            for form in FORMS:
                self.assertIn(form, hypothesis["text"])
        plain = self.translate([TEXT], beam_size=4)["translations"][0]["hypotheses"][0]["text"]
        self.assertNotIn("Zweirad", plain)
        glossary = os.path.join(self.temp_dir(), "terms.tsv")
        with open(glossary, "w") as f:
            f.write("".join(f"{e['source']}\t{e['targets'][0]}\n" for e in GLOSSARY))
        result = subprocess.run(
            [binary("mttranslate"), "--threads=1", "--beam_size=4", f"--glossary={glossary}",
             "--keep=Zorblax", "--keep_patterns=placeholders,urls"],
            input=TEXT + "\n", capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, hypotheses[0]["text"] + "\n")

    def test_greedy_is_widened_and_still_holds_the_terms(self):
        best = self.translate([TEXT], **self.terms())["translations"][0]["hypotheses"]
        self.assertEqual(len(best), 1)
        for form in FORMS:
            self.assertIn(form, best[0]["text"])

    def test_a_stored_glossary_translates_as_its_entries_inline(self):
        code, _, info = call(self.server.http_port, "POST", "/v1/glossaries",
                             {"name": "bikes", "source_language": "en", "target_language": "de",
                              "entries": GLOSSARY})
        self.assertEqual(code, 201, info)
        stored = self.translate([TEXT], beam_size=4, glossary_id=json.loads(info)["id"])
        inline = self.translate([TEXT], beam_size=4, glossary=GLOSSARY)
        self.assertEqual(stored["translations"], inline["translations"])
        self.assertIn("Zweirad", stored["translations"][0]["hypotheses"][0]["text"])

    def test_markup_formats_keep_terms_and_their_markup(self):
        html = ('<p>A man rides a <b>bike</b> past <span translate="no">Zorb &amp; Co</span> '
                'today.</p>')
        out = self.translate([html], format="TEXT_FORMAT_HTML", glossary=GLOSSARY)
        out = out["translations"][0]["hypotheses"][0]["text"]
        self.assertIn("<b>Zweirad</b>", out)
        self.assertIn('<span translate="no">Zorb &amp; Co</span>', out)
        for fmt, text in (("TEXT_FORMAT_MARKDOWN", "# A bike\n\nA man rides a *bike* home.\n"),
                          ("TEXT_FORMAT_SRT",
                           "1\n00:00:01,000 --> 00:00:02,000\nA man rides a bike.\n")):
            with self.subTest(fmt):
                out = self.translate([text], format=fmt, glossary=GLOSSARY)
                out = out["translations"][0]["hypotheses"][0]["text"]
                self.assertGreaterEqual(out.count("Zweirad"), 1 + (fmt == "TEXT_FORMAT_MARKDOWN"),
                                        out)

    def test_the_cache_keeps_translations_with_terms_apart(self):
        text = ["A man rides a bike."]
        first = self.translate(text, glossary=GLOSSARY)["translations"][0]["hypotheses"][0]
        plain = self.translate(text)["translations"][0]["hypotheses"][0]
        again = self.translate(text, glossary=GLOSSARY)["translations"][0]["hypotheses"][0]
        self.assertIn("Zweirad", first["text"])
        self.assertNotIn("Zweirad", plain["text"])
        self.assertEqual(again["text"], first["text"])

    def test_refusals_name_the_field_and_the_limit(self):
        for name, options, status, needles in [
                ("an unknown glossary", {"glossary_id": "nothing"}, 404,
                 ["options.glossary_id", "nothing"]),
                ("a pattern that names none", {"keep_patterns": [7]}, 400,
                 ["options.keep_patterns[0] is 7"]),
                ("more terms than the flag", {"keep": ["a1", "a2", "a3", "a4", "a5"]}, 400,
                 ["options.glossary and options.keep", "5 kept terms", "4"]),
                ("a form that does not read back",
                 {"glossary": [{"source": "fish", "targets": ["\ufb01sh"]}]}, 400,
                 ["options.glossary[0].targets[0]"]),
                ("markup in a term", {"keep": ["<b>"]}, 400, ["options.keep[0]"])]:
            with self.subTest(name):
                code, _, answer = call(self.server.http_port, "POST", "/v1/translate",
                                       {"texts": ["A man rides a bike."], "options": options})
                self.assertEqual(code, status, answer)
                for needle in needles:
                    self.assertIn(needle, json.loads(answer)["message"])


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
