#!/usr/bin/env python3
"""mttranslate as a user runs it: a line is a text of any number of sentences.

- A paragraph of six Multi30k sentences on one line translates as the six lines do one by one,
  joined by the same spaces (before sentence splitting, five of the six were lost).
- The layout of a line (indentation, the spaces between sentences, trailing space) is kept.
- A line far over the model's 512 positions is translated in pieces, not refused.
- --split_sentences=false takes a line as one sentence, as before.
- --with_alignment follows the translation with a tab and source-target token pairs.
- --format=html: a line is an HTML document, translated as the server translates it: a few
  documents (blocks, inline markup, attributes, entities, untranslated elements) give exactly
  the server's /v1/translate answer with format TEXT_FORMAT_HTML; --with_alignment and an unknown
  format are refused.
- --compute_type: every type translates; auto picks int8 exactly when /proc/cpuinfo shows VNNI;
  on a CPU without AVX-512 (oneDNN told so by ONEDNN_MAX_CPU_ISA) int8 still works, auto falls
  back to float32 and bfloat16 is refused with a message naming the type and the feature.

Usage: mttranslate_test.py BIN_DIR MULTI30K_TEXT [-- UNITTEST_ARGS]  (mttranslate and mtserve)
"""
import json
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary, call  # noqa: E402

# HTML documents, one a line, as mttranslate --format=html reads them.
HTML_DOCUMENTS = [
    "<p>A dog runs on the beach. Two children play in the water.</p>",
    "<h1>A man in a <b>red</b> shirt.</h1><p>A woman is <a href=\"/x\">reading a book</a>.</p>",
    "<div><img src=\"a.png\" alt=\"A black dog.\" title=\"A girl &amp; her cat.\">"
    "<p>People walk &quot;down&quot; the street.</p><script>var s = \"A dog.\";</script></div>",
    "<ul><li>A boy jumps.</li><li>Two men <i>sit</i> on a bench.</li></ul>"
    "<p translate=\"no\">A dog.</p><!-- A comment. -->",
]
# oneDNN told the CPU has no AVX-512.
AVX2 = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")


def run(text, *flags, env=None):
    return subprocess.run([binary("mttranslate"), "--threads=1", *flags], input=text,
                          capture_output=True, text=True, timeout=600, env=env)


def benchmark_type(result):
    """The compute type the --benchmark line reports, or None."""
    for line in result.stderr.splitlines():
        if line.startswith("mttranslate benchmark:"):
            return line.rsplit(", ", 1)[-1]
    return None


def cpu_has_vnni():
    with open("/proc/cpuinfo") as f:
        flags = next(line for line in f if line.startswith("flags")).split()
    return "avx512_vnni" in flags or "avx_vnni" in flags


def first_sentences(count):
    with open(e2e_suite.ARGS.multi30k_text, encoding="utf-8") as f:
        return [line.strip() for line in f][:count]


class SentencesTest(unittest.TestCase):
    """A line of several sentences; the six sentences translated one a line, and as one
    paragraph, once for the class."""

    @classmethod
    def setUpClass(cls):
        cls.sentences = first_sentences(6)
        cls.one_by_one = run("\n".join(cls.sentences) + "\n", "--beam_size=4")
        cls.paragraph = run(" ".join(cls.sentences) + "\n", "--beam_size=4")
        if cls.one_by_one.returncode != 0:
            raise RuntimeError(f"mttranslate failed on the sentences:\n{cls.one_by_one.stderr}")
        cls.first, cls.second = cls.one_by_one.stdout.splitlines()[:2]

    def test_a_paragraph_translates_as_its_sentences_do(self):
        expected = " ".join(self.one_by_one.stdout.splitlines()) + "\n"
        self.assertEqual(self.paragraph.returncode, 0, self.paragraph.stderr)
        self.assertEqual(self.paragraph.stdout, expected, self.paragraph.stderr)

    def test_the_layout_of_a_line_is_kept(self):
        layout = run(f"    {self.sentences[0]}   {self.sentences[1]}  \n", "--beam_size=4")
        self.assertEqual(layout.stdout, f"    {self.first}   {self.second}  \n", layout.stderr)

    def test_split_sentences_false_is_one_sentence(self):
        """--split_sentences=false: one translation, without the others'."""
        whole = run(" ".join(self.sentences) + "\n", "--beam_size=4", "--split_sentences=false")
        self.assertEqual(whole.returncode, 0, whole.stderr)
        self.assertNotEqual(whole.stdout, self.paragraph.stdout, whole.stderr)
        self.assertEqual(len(whole.stdout.splitlines()), 1, whole.stdout)

    def test_with_alignment(self):
        """--with_alignment: the translation, a tab, then source-target pairs.

        One pair per generated token (each sentence's </s> included, so at least two for two
        sentences), targets 0, 1, 2, ... in order."""
        aligned = run(f"{self.sentences[0]} {self.sentences[1]}\n", "--beam_size=4",
                      "--with_alignment")
        detail = f"got {aligned.stdout!r}; {aligned.stderr}"
        self.assertEqual(aligned.returncode, 0, detail)
        text, _, pairs = aligned.stdout.rstrip("\n").partition("\t")
        self.assertEqual(text, f"{self.first} {self.second}", detail)
        parsed = [tuple(int(x) for x in pair.split("-")) for pair in pairs.split()]
        self.assertGreaterEqual(len(parsed), 2, detail)
        self.assertEqual([t for _, t in parsed], list(range(len(parsed))), detail)
        self.assertTrue(all(s >= 0 for s, _ in parsed), detail)

    def test_a_line_over_the_positions_is_translated_in_pieces(self):
        """A line over the model's positions is translated in pieces.

        About 800 tokens and no sentence end: over the model's 512 positions, translated in two
        pieces; with a limit of 64 tokens, in many more, each giving a translation of its own."""
        long_line = " ".join(["a dog runs on the beach and"] * 100)
        long_run = run("A man.\n" + long_line + "\nA child.\n")
        lines = long_run.stdout.splitlines()
        self.assertEqual(long_run.returncode, 0, long_run.stderr)
        self.assertEqual(len(lines), 3, long_run.stdout)
        self.assertNotEqual(lines[1], "", long_run.stdout)
        short_pieces = run(long_line + "\n", "--max_input_tokens=64")
        self.assertEqual(short_pieces.returncode, 0, short_pieces.stderr)
        self.assertGreater(len(short_pieces.stdout.split()), 3 * len(lines[1].split()),
                           f"with 64 tokens a piece: {short_pieces.stdout!r}; "
                           f"with 512: {lines[1]!r}")


class ComputeTypeTest(unittest.TestCase):
    """--compute_type on two lines, with --benchmark reporting the type used."""

    @classmethod
    def setUpClass(cls):
        cls.two_lines = "\n".join(first_sentences(2)) + "\n"

    def test_every_type_translates(self):
        for compute_type in ("float32", "bfloat16", "int8"):
            with self.subTest(compute_type):
                typed = run(self.two_lines, "--benchmark", f"--compute_type={compute_type}")
                self.assertEqual(typed.returncode, 0, typed.stderr)
                self.assertEqual(len(typed.stdout.splitlines()), 2, typed.stdout)
                self.assertEqual(benchmark_type(typed), compute_type, typed.stderr)

    def test_auto_is_int8_exactly_with_vnni(self):
        auto = run(self.two_lines, "--benchmark", "--compute_type=auto")
        self.assertEqual(auto.returncode, 0, auto.stderr)
        self.assertEqual(benchmark_type(auto), "int8" if cpu_has_vnni() else "float32",
                         auto.stderr)

    def test_an_unknown_type_is_refused_naming_the_accepted_ones(self):
        bad = run(self.two_lines, "--compute_type=fp16")
        self.assertEqual(bad.returncode, 2, bad.stderr)
        self.assertIn("float32, bfloat16, int8, auto", bad.stderr)

    def test_without_avx512_int8_still_translates(self):
        int8 = run(self.two_lines, "--benchmark", "--compute_type=int8", env=AVX2)
        self.assertEqual(int8.returncode, 0, int8.stderr)
        self.assertEqual(len(int8.stdout.splitlines()), 2, int8.stdout)

    def test_without_avx512_auto_is_float32(self):
        auto = run(self.two_lines, "--benchmark", "--compute_type=auto", env=AVX2)
        self.assertEqual(auto.returncode, 0, auto.stderr)
        self.assertEqual(benchmark_type(auto), "float32", auto.stderr)

    def test_without_avx512_bfloat16_is_refused_naming_the_type_and_the_feature(self):
        bf16 = run(self.two_lines, "--compute_type=bfloat16", env=AVX2)
        self.assertNotEqual(bf16.returncode, 0, bf16.stderr)
        self.assertIn("bfloat16", bf16.stderr)
        self.assertIn("avx512_core", bf16.stderr)
        self.assertEqual(bf16.stdout, "")


class HtmlFormatTest(e2e_suite.MtserveTestCase):
    """--format=html, against mtserve on the same documents with the same options."""

    server_flags = ("--workers=1",)

    def test_each_document_as_the_server_translates_it(self):
        offline = run("\n".join(HTML_DOCUMENTS) + "\n", "--beam_size=4", "--format=html")
        status, _, body = call(self.server.http_port, "POST", "/v1/translate",
                               {"texts": HTML_DOCUMENTS,
                                "options": {"beam_size": 4, "format": "TEXT_FORMAT_HTML"}})
        self.assertEqual(status, 200, body)
        served = [t["hypotheses"][0]["text"] for t in json.loads(body)["translations"]]
        self.assertEqual(offline.returncode, 0, offline.stderr)
        self.assertEqual(offline.stdout.splitlines(), served, offline.stderr)
        for document, translation in zip(HTML_DOCUMENTS, served):
            self.assertNotEqual(translation, document, "a document left untranslated")

    def test_with_alignment_is_refused(self):
        aligned = run(HTML_DOCUMENTS[0] + "\n", "--format=html", "--with_alignment")
        self.assertEqual(aligned.returncode, 2, aligned.stderr)
        self.assertIn("--format=text", aligned.stderr)

    def test_an_unknown_format_is_refused_naming_the_formats(self):
        unknown = run("A dog.\n", "--format=pdf")
        self.assertEqual(unknown.returncode, 2, unknown.stderr)
        self.assertIn("text, html, markdown, srt, vtt, docx", unknown.stderr)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "multi30k_text")
