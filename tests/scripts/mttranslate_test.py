#!/usr/bin/env python3
"""mttranslate as a user runs it: a line is a text of any number of sentences.

- A paragraph of six Multi30k sentences on one line translates as the six lines do one by one,
  joined by the same spaces (before sentence splitting, five of the six were lost).
- The layout of a line (indentation, the spaces between sentences, trailing space) is kept.
- A line far over the model's 512 positions is translated in pieces, not refused.
- --split_sentences=false takes a line as one sentence, as before.
- --with_alignment follows the translation with a tab and source-target token pairs.

Usage: mttranslate_test.py MTTRANSLATE_BINARY MULTI30K_TEXT
"""
import subprocess
import sys


def run(binary, text, *flags):
    return subprocess.run([binary, "--threads=1", *flags], input=text, capture_output=True,
                          text=True, timeout=600)


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

    for name, passed, detail in results:
        print(("ok   " if passed else "FAIL ") + name + ("" if passed else ": " + detail))
    failed = sum(not passed for _, passed, _ in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
