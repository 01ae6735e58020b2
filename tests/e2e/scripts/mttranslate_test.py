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

Usage: mttranslate_test.py MTTRANSLATE_BINARY MULTI30K_TEXT (mtserve next to mttranslate)
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import call  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

# HTML documents, one a line, as mttranslate --format=html reads them.
HTML_DOCUMENTS = [
    "<p>A dog runs on the beach. Two children play in the water.</p>",
    "<h1>A man in a <b>red</b> shirt.</h1><p>A woman is <a href=\"/x\">reading a book</a>.</p>",
    "<div><img src=\"a.png\" alt=\"A black dog.\" title=\"A girl &amp; her cat.\">"
    "<p>People walk &quot;down&quot; the street.</p><script>var s = \"A dog.\";</script></div>",
    "<ul><li>A boy jumps.</li><li>Two men <i>sit</i> on a bench.</li></ul>"
    "<p translate=\"no\">A dog.</p><!-- A comment. -->",
]


def run(binary, text, *flags, env=None):
    return subprocess.run([binary, "--threads=1", *flags], input=text, capture_output=True,
                          text=True, timeout=600, env=env)


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


def main():
    binary, source = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        sentences = [line.strip() for line in f][:6]
    results = []

    one_by_one = run(binary, "\n".join(sentences) + "\n", "--beam_size=4")
    paragraph = run(binary, " ".join(sentences) + "\n", "--beam_size=4")
    expected = " ".join(one_by_one.stdout.splitlines())
    results.append(("a paragraph translates as its sentences do",
                    paragraph.returncode == 0 and paragraph.stdout == expected + "\n",
                    f"got {paragraph.stdout!r}, want {expected!r}; {paragraph.stderr}"))

    first, second = one_by_one.stdout.splitlines()[:2]
    layout = run(binary, f"    {sentences[0]}   {sentences[1]}  \n", "--beam_size=4")
    want = f"    {first}   {second}  \n"
    results.append(("the layout of a line is kept", layout.stdout == want,
                    f"got {layout.stdout!r}, want {want!r}"))

    whole = run(binary, " ".join(sentences) + "\n", "--beam_size=4", "--split_sentences=false")
    results.append(("--split_sentences=false: one sentence, one translation without the others",
                    whole.returncode == 0 and whole.stdout != paragraph.stdout
                    and len(whole.stdout.splitlines()) == 1, whole.stderr))

    # --with_alignment: the same translation, then a tab and one source-target pair per
    # generated token (each sentence's </s> included, so at least two for two sentences),
    # targets 0, 1, 2, ... in order.
    two = f"{sentences[0]} {sentences[1]}\n"
    aligned = run(binary, two, "--beam_size=4", "--with_alignment")
    text, _, pairs = aligned.stdout.rstrip("\n").partition("\t")
    parsed = [tuple(int(x) for x in pair.split("-")) for pair in pairs.split()]
    results.append(("--with_alignment: the translation, a tab, source-target pairs",
                    aligned.returncode == 0 and text == f"{first} {second}"
                    and len(parsed) >= 2 and [t for _, t in parsed] == list(range(len(parsed)))
                    and all(s >= 0 for s, _ in parsed),
                    f"got {aligned.stdout!r}; {aligned.stderr}"))

    # About 800 tokens and no sentence end: over the model's 512 positions, translated in two
    # pieces; with a limit of 64 tokens, in many more, each giving a translation of its own.
    long_line = " ".join(["a dog runs on the beach and"] * 100)
    long_run = run(binary, "A man.\n" + long_line + "\nA child.\n")
    lines = long_run.stdout.splitlines()
    short_pieces = run(binary, long_line + "\n", "--max_input_tokens=64")
    results.append(("a line over the model's positions is translated in pieces",
                    long_run.returncode == 0 and len(lines) == 3 and lines[1] != ""
                    and short_pieces.returncode == 0
                    and len(short_pieces.stdout.split()) > 3 * len(lines[1].split()),
                    long_run.stderr + short_pieces.stderr))

    two_lines = f"{sentences[0]}\n{sentences[1]}\n"
    for compute_type in ("float32", "bfloat16", "int8"):
        typed = run(binary, two_lines, "--benchmark", f"--compute_type={compute_type}")
        results.append((f"--compute_type={compute_type} translates",
                        typed.returncode == 0 and len(typed.stdout.splitlines()) == 2
                        and benchmark_type(typed) == compute_type, typed.stderr))
    auto = run(binary, two_lines, "--benchmark", "--compute_type=auto")
    want = "int8" if cpu_has_vnni() else "float32"
    results.append((f"--compute_type=auto is {want} on this CPU",
                    auto.returncode == 0 and benchmark_type(auto) == want, auto.stderr))
    bad = run(binary, two_lines, "--compute_type=fp16")
    results.append(("an unknown compute type is refused, naming the accepted ones",
                    bad.returncode == 2 and "float32, bfloat16, int8, auto" in bad.stderr,
                    bad.stderr))
    avx2 = dict(os.environ, ONEDNN_MAX_CPU_ISA="AVX2")
    int8_avx2 = run(binary, two_lines, "--benchmark", "--compute_type=int8", env=avx2)
    results.append(("without AVX-512, int8 still translates",
                    int8_avx2.returncode == 0 and len(int8_avx2.stdout.splitlines()) == 2,
                    int8_avx2.stderr))
    auto_avx2 = run(binary, two_lines, "--benchmark", "--compute_type=auto", env=avx2)
    results.append(("without AVX-512, auto is float32",
                    auto_avx2.returncode == 0 and benchmark_type(auto_avx2) == "float32",
                    auto_avx2.stderr))
    bf16_avx2 = run(binary, two_lines, "--compute_type=bfloat16", env=avx2)
    results.append(("without AVX-512, bfloat16 is refused naming the type and the feature",
                    bf16_avx2.returncode != 0 and "bfloat16" in bf16_avx2.stderr
                    and "avx512_core" in bf16_avx2.stderr and bf16_avx2.stdout == "",
                    bf16_avx2.stderr))

    results += html_checks(binary)

    for name, passed, detail in results:
        print(("ok   " if passed else "FAIL ") + name + ("" if passed else ": " + detail))
    failed = sum(not passed for _, passed, _ in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


def html_checks(binary):
    """mttranslate --format=html against the server (mtserve, next to mttranslate) on the same
    documents with the same options."""
    results = []
    offline = run(binary, "\n".join(HTML_DOCUMENTS) + "\n", "--beam_size=4", "--format=html")
    mtserve = os.path.join(os.path.dirname(binary), "mtserve")
    with MtserveProcess(mtserve, "--workers=1") as server:
        status, _, body = call(server.http_port, "POST", "/v1/translate",
                               {"texts": HTML_DOCUMENTS,
                                "options": {"beam_size": 4, "format": "TEXT_FORMAT_HTML"}})
    served = [t["hypotheses"][0]["text"] for t in json.loads(body)["translations"]] \
        if status == 200 else body
    results.append(("--format=html: each document as the server translates it",
                    offline.returncode == 0 and status == 200
                    and offline.stdout.splitlines() == served
                    and all(a != b for a, b in zip(served, HTML_DOCUMENTS)),
                    f"mttranslate {offline.stdout!r} {offline.stderr}; server {served!r}"))
    aligned = run(binary, HTML_DOCUMENTS[0] + "\n", "--format=html", "--with_alignment")
    results.append(("--format=html refuses --with_alignment",
                    aligned.returncode == 2 and "--format=text" in aligned.stderr, aligned.stderr))
    unknown = run(binary, "A dog.\n", "--format=markdown")
    results.append(("an unknown --format is refused, naming the formats",
                    unknown.returncode == 2 and "text, html" in unknown.stderr, unknown.stderr))
    return results


if __name__ == "__main__":
    main()
