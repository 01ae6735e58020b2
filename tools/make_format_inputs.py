#!/usr/bin/env python3
"""Makes the document formats' benchmark inputs (docs/benchmarks.md#document-formats) from the
Multi30k test sentences, the same every run (a fixed seed):

  book.md     a book: chapters (#) and sections (##) titled by sentences, paragraphs of 3 to 8
              sentences (fewer before one that starts with a digit), bulleted and numbered lists (a sentence an item), block quotes, fenced
              code blocks (not translated), and in the sentences *emphasis*, **strong**,
              [links](...) and `code` around words
  film.srt    a two-hour film: a cue for a sentence, or two or more for a longer one split
              between words (of at most 84 characters; each 80 to 250 ms after the one before), a few cues of two dialogue
              lines ("- ... / - ..."), some <i>; lines wrapped at 42 characters; reading-speed
              durations and gaps between sentences of 0.3 to 4 s (some of 6 to 20 s: scene changes)
  plain.txt   the same sentences, one a line, as plain text
  book.epub   book.md made an EPUB 3 by pandoc (its navigation lists the chapters and sections
              again)
  report.docx a Word report of the sentences three times over, made by python-docx: about a
              hundred pages of 3,000 paragraphs, a heading every 40 paragraphs, bold, italic and
              linked words, a table of 3 x 4 sentences every 100 paragraphs, an image every 150
  report.txt  the sentences of report.docx in its order (cells row by row), one a line

Each sentence is a test line, with a full stop added where it ends without one (so that every
format has the same sentences). Prints the counts.

Usage: tools/make_format_inputs.py OUT_DIR [SENTENCES_FILE]
"""
import io
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from make_office_fixtures import hyperlink, png  # noqa: E402
DEFAULT_SENTENCES = os.path.join(ROOT, "tests", "data", "multi30k", "test_2016_flickr.en")


def sentences_from(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line[-1] not in ".!?":
                line += "."
            out.append(line[0].upper() + line[1:])
    return out


def mark_words(sentence, rng):
    """The sentence with Markdown inline markup around some of its inner words."""
    words = sentence.split(" ")
    if len(words) < 5:
        return sentence
    roll = rng.random()
    i = rng.randrange(1, len(words) - 2)
    if not words[i].isalpha():
        return sentence
    if roll < 0.15:
        words[i] = f"*{words[i]}*"
    elif roll < 0.25:
        words[i] = f"**{words[i]}**"
    elif roll < 0.35 and words[i + 1].isalpha():
        words[i] = f"[{words[i]}"
        words[i + 1] = f"{words[i + 1]}](https://example.org/{rng.randrange(1000)})"
    elif roll < 0.40:
        words[i] = f"`{words[i]}`"
    return " ".join(words)


CODE = ["```sh\nconvert photo.jpg -resize 50% small.jpg\n```",
        "```python\nfor name in sorted(names):\n    print(name)\n```"]


def running(sentences, i, n):
    """How many of the n sentences from i may run on in one paragraph: up to one that starts with
    other than a capital ("2 girls ..."), which Unicode's rules join to the sentence before."""
    for k in range(1, min(n, len(sentences) - i)):
        if not sentences[i + k][0].isupper():
            return k
    return n


def book(sentences, rng):
    blocks, i, chapter = [], 0, 0
    take = lambda n: [mark_words(s, rng) for s in sentences[i:i + n]]  # noqa: E731
    while i < len(sentences):
        if chapter == 0 or rng.random() < 0.08:
            chapter += 1
            blocks.append(f"# {sentences[i]}")
            i += 1
            continue
        roll = rng.random()
        if roll < 0.12:
            blocks.append(f"## {sentences[i]}")
            i += 1
        elif roll < 0.24:
            n = rng.randint(3, 5)
            blocks.append("\n".join(f"- {s}" for s in take(n)))
            i += n
        elif roll < 0.30:
            n = rng.randint(3, 5)
            blocks.append("\n".join(f"{k + 1}. {s}" for k, s in enumerate(take(n))))
            i += n
        elif roll < 0.35:
            n = running(sentences, i, rng.randint(1, 3))
            blocks.append("> " + " ".join(take(n)))
            i += n
        elif roll < 0.38:
            blocks.append(rng.choice(CODE))
        else:
            n = running(sentences, i, rng.randint(3, 8))
            blocks.append(" ".join(take(n)))
            i += n
    return "\n\n".join(blocks) + "\n", chapter


def wrap(text, width=42):
    """Two lines (or one) of a cue's text, broken at the space nearest the middle if too long."""
    if len(text) <= width:
        return text
    middle = len(text) // 2
    spaces = [k for k, c in enumerate(text) if c == " "]
    if not spaces:
        return text
    k = min(spaces, key=lambda s: abs(s - middle))
    return text[:k] + "\n" + text[k + 1:]


def srt_time(ms):
    return f"{ms // 3600000:02}:{ms // 60000 % 60:02}:{ms // 1000 % 60:02},{ms % 1000:03}"


def film(sentences, rng):
    cues, at, i, spanning = [], 60000, 0, 0

    def add(text, gap_after):
        nonlocal at
        duration = min(7000, max(1200, len(text) * 1000 // 15))
        cues.append((at, at + duration, text))
        at += duration + gap_after

    def between():
        if rng.random() < 0.12:
            return rng.randint(6000, 20000)
        return rng.randint(300, 4000)

    while i < len(sentences):
        s = sentences[i]
        roll = rng.random()
        if roll < 0.04 and i + 1 < len(sentences) and len(s) + len(sentences[i + 1]) < 90:
            add(f"- {s}\n- {sentences[i + 1]}", between())
            i += 2
            continue
        italic = rng.random() < 0.05
        pieces = max(-(-len(s) // 84), 2 if len(s) > 40 and roll < 0.5 else 1)
        words = s.split(" ")
        cuts = [0] + [len(words) * k // pieces + rng.randint(-1, 1) for k in range(1, pieces)]
        parts = [" ".join(words[a:b]) for a, b in zip(cuts, cuts[1:] + [len(words)])]
        for k, part in enumerate(parts):
            text = wrap(part)
            add(f"<i>{text}</i>" if italic else text,
                between() if k + 1 == len(parts) else rng.randint(80, 250))
        spanning += len(parts) > 1
        i += 1
    text = "".join(f"{n + 1}\n{srt_time(a)} --> {srt_time(b)}\n{t}\n\n"
                   for n, (a, b, t) in enumerate(cues))
    return text, len(cues), spanning, cues[-1][1]


def add_sentence(paragraph, sentence, rng):
    """The sentence as runs: plain, with one inner word bold, italic or linked now and then."""
    words = sentence.split(" ")
    roll = rng.random()
    if len(words) < 5 or roll >= 0.35:
        paragraph.add_run(sentence)
        return
    i = rng.randrange(1, len(words) - 2)
    paragraph.add_run(" ".join(words[:i]) + " ")
    if roll < 0.15:
        paragraph.add_run(words[i]).bold = True
    elif roll < 0.25:
        paragraph.add_run(words[i]).italic = True
    else:
        hyperlink(paragraph, f"https://example.org/{rng.randrange(1000)}", words[i])
    paragraph.add_run(" " + " ".join(words[i + 1:]))


def report(sentences, rng):
    """report.docx's bytes and its sentences in order."""
    import docx
    from docx.shared import Inches
    document = docx.Document()
    image = png(96, 64, (30, 120, 200))
    order, paragraphs = [], 0
    pool = sentences * 3
    i = 0
    while i < len(pool):
        if paragraphs % 40 == 0:
            document.add_heading(pool[i], level=1)
            order.append(pool[i])
            i += 1
        elif paragraphs % 100 == 50 and i + 12 <= len(pool):
            table = document.add_table(rows=3, cols=4)
            for cell, sentence in zip((c for row in table.rows for c in row.cells), pool[i:i + 12]):
                cell.text = sentence
            order.extend(pool[i:i + 12])
            i += 12
        elif paragraphs % 150 == 75:
            document.add_picture(io.BytesIO(image), width=Inches(1.5))
        else:
            add_sentence(document.add_paragraph(), pool[i], rng)
            order.append(pool[i])
            i += 1
        paragraphs += 1
    out = io.BytesIO()
    document.save(out)
    return out.getvalue(), order, paragraphs


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    sentences = sentences_from(sys.argv[2] if len(sys.argv) == 3 else DEFAULT_SENTENCES)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "plain.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(sentences) + "\n")
    markdown, chapters = book(sentences, random.Random(1))
    with open(os.path.join(out_dir, "book.md"), "w", encoding="utf-8") as f:
        f.write(markdown)
    subtitles, cues, spanning, end = film(sentences, random.Random(2))
    with open(os.path.join(out_dir, "film.srt"), "w", encoding="utf-8") as f:
        f.write(subtitles)
    subprocess.run(["pandoc", "--metadata", f"title={sentences[0]}", "-o",
                    os.path.join(out_dir, "book.epub"), os.path.join(out_dir, "book.md")],
                   check=True)
    docx_bytes, order, paragraphs = report(sentences, random.Random(3))
    with open(os.path.join(out_dir, "report.docx"), "wb") as f:
        f.write(docx_bytes)
    with open(os.path.join(out_dir, "report.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(order) + "\n")
    print(f"{len(sentences)} sentences; book.md: {chapters} chapters, {len(markdown)} bytes; "
          f"film.srt: {cues} cues, {spanning} sentences over two or more, ending at {srt_time(end)}; "
          f"report.docx: {paragraphs} paragraphs, {len(order)} sentences, {len(docx_bytes)} bytes")


if __name__ == "__main__":
    main()
