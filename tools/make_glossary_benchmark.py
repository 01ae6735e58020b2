#!/usr/bin/python3
"""Makes the glossary benchmark's terms (docs/benchmarks.md#glossaries): for each line of
Multi30k's test_2016_flickr, the entries of an independent dictionary, Debian's FreeDict
English-German (dict-freedict-eng-deu, dictd format), whose English headword occurs in the
English line and whose German translation occurs in the German reference line. Writes JSON
Lines, one object per line of the test set, in order:

  {"line": N, "glossary": [{"source": "dog", "targets": ["Hund"]}, ...]}

N counts the lines from 1; "glossary" may be empty; its entries are in the order their sources
first occur in the line.

Which entries are kept, and why:
- The source is the headword as the line writes it: as the dictionary writes it, or lowercased
  ("Man" at the start of a line matches "man", and the entry's source is then "Man", since
  glossaries match case as written). A line that holds a headword in two spellings ("Man ...
  man") keeps neither.
- Whole words only, and unambiguous ones: not next to an apostrophe or hyphen ("dog" in
  "dog's", "shirt" in "T-shirt": whole words under some word-boundary rules only), or the entry
  is left out of that line.
- Content words: a source whose words are all function words (articles, pronouns, prepositions,
  conjunctions, auxiliaries: STOPWORDS) is left out ("in front of" is kept, for "front"), and so
  is one that opens with an article ("a woman": the entry of "woman" with an article).
- A target is one of the headword's translations over all its dictionary entries (grammar and
  usage labels, genders, parenthesised notes and a leading article stripped; forms with
  placeholders such as "jdm." or "etw.", slashes, digits or other punctuation dropped), at
  least 3 characters, found in the reference line as a whole word (its first letter's case may
  differ at the start of a sentence; once is enough, though the guarantee asks one form per
  occurrence of the source: 11 of the 1,000 lines' references miss a second one). An entry's
  targets are those forms (at most 8, the server's default per entry).
- Terms do not overlap: longer sources first (ties alphabetically), a source with an occurrence
  inside a longer kept one's ("ball" in "tennis ball") is left out, and so is an entry with a
  target form another kept entry of the line has (each occurrence needs a form of its own in the
  translation).

--lines=N keeps only the first N lines that hold an entry (the guarantee test's subset:
tests/data/glossary/). Prints a summary to stderr. Standard library only (/usr/bin/python3).

Usage: tools/make_glossary_benchmark.py [--lines=N] [--dict=PREFIX] [--source=EN] \\
           [--reference=DE] [OUT.jsonl]   (stdout without OUT)
"""
import argparse
import collections
import gzip
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from glossary_terms import source_spans  # noqa: E402

DICTIONARY = "/usr/share/dictd/freedict-eng-deu"
TEST_SET = os.path.join(ROOT, "tests", "data", "multi30k", "test_2016_flickr")
MAX_TARGETS = 8
MIN_TARGET_CHARACTERS = 3

STOPWORDS = frozenset("""
a an the and or but nor so yet if than then as of in on at to for with from by into onto upon
over under up down out off about above across after against along among around before behind
below beneath beside besides between beyond during except inside near next outside past since
through throughout toward towards underneath until within without via per
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
this that these those there here who whom whose which what where when why how
is are was were be been being am do does did doing has have had having will would shall should
can could may might must not no yes all any some each every both either neither other another
such own same one ones very too also just only while
""".split())

ARTICLES = frozenset(("a", "an", "the"))

_BASE64 = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_ARTICLE = re.compile(r"^(?:der|die|das) (?=\S)")
_FORM = re.compile(r"[^\W\d_]+(?:[ -][^\W\d_]+)*")


def decode_number(text):
    """A dictd index's number: base 64, most significant digit first."""
    value = 0
    for c in text:
        value = value * 64 + _BASE64[c]
    return value


def index_key(text):
    """How a dictd index writes a headword: lowercased, punctuation other than spaces dropped."""
    return " ".join(re.sub(r"[^\w\s]", "", text.lower()).split())


def parse_headword(first_line):
    """The headword of an entry's first line, "ice cream /ˈaɪs kɹˈiːm/ (...) <pos>": the text
    before its pronunciation (or before a parenthesis or a part-of-speech tag)."""
    head = re.split(r" /| \(| <", first_line, maxsplit=1)[0]
    return head.strip()


def parse_translation_line(line):
    """The German forms of one translation line: comma- or semicolon-separated items such as
    "[coll.] Fahrrad <neut>", "Radl <neut> [Bayr.]", "der Reitsport <masc>" or an abbreviation's
    translation glued on, "Straße <fem>Str.": labels, notes in parentheses, tags and what follows
    a tag, and a leading article dropped; items that are not plain words after that (placeholders
    like "jdm.", slashes, digits, punctuation) left out."""
    line = re.sub(r"\[[^\]]*\]", " ", line)
    line = re.sub(r"\([^()]*\)", " ", line)
    line = re.sub(r"<[^>]*>", "\0", line)
    forms = []
    for item in re.split(r"[,;]", line):
        item = " ".join(item.split("\0")[0].split())
        item = _ARTICLE.sub("", item)
        if _FORM.fullmatch(item):
            forms.append(item)
    return forms


def parse_entry(text):
    """(headword as written, [German forms]) of one dictd entry of FreeDict's TEI-derived text:
    the first line holds the headword and its pronunciation; translation lines follow, unindented
    or indented by one space when they open with a usage label ("[Am.] ..."); examples, notes,
    synonyms and cross-references ("see:") are indented further or open with "see:"."""
    lines = text.split("\n")
    forms = []
    for line in lines[1:]:
        if not line.strip() or line.startswith("  ") or line.startswith(" see:"):
            continue
        if line.startswith(" ") and not line.startswith(" ["):
            continue
        forms.extend(parse_translation_line(line))
    return parse_headword(lines[0]), forms


def read_dictionary(prefix, wanted_keys):
    """{headword as written: [German forms, first seen first]} for the headwords whose index key
    (index_key) is in `wanted_keys`, over all their entries, from PREFIX.index and PREFIX.dict.dz
    (dictzip: gzip-compatible)."""
    spans = []
    with open(prefix + ".index", encoding="utf-8") as index:
        for row in index:
            fields = row.rstrip("\n").split("\t")
            if len(fields) == 3 and fields[0] in wanted_keys:
                spans.append((decode_number(fields[1]), decode_number(fields[2])))
    with gzip.open(prefix + ".dict.dz") as f:
        data = f.read()
    translations = collections.defaultdict(list)
    for offset, length in sorted(set(spans)):
        headword, forms = parse_entry(data[offset:offset + length].decode("utf-8"))
        known = translations[headword]
        known.extend(f for f in forms if f not in known)
    return translations


def is_content(source):
    """Whether a headword is kept as a source: not only function words, and not opening with an
    article (those entries, "a woman", are the noun's with its article)."""
    words = re.findall(r"[\w']+", source.lower())
    return (bool(words) and len(source) >= 2 and words[0] not in ARTICLES
            and not all(w in STOPWORDS for w in words))


def _found_in(text, form):
    """Whether `form` is a whole word (strictly bounded) of `text`, or is one with its first
    letter's case changed at the start of a sentence of it."""
    if source_spans(text, form):
        return True
    swapped = form[:1].swapcase() + form[1:]
    return any(b == 0 or re.search(r"[.!?]\s+$", text[:b]) for b, _ in source_spans(text, swapped))


def line_glossary(source, reference, translations):
    """The entries kept for one line (the module's rules)."""
    lowered = source.lower()
    same_length = len(lowered) == len(source)
    candidates = collections.defaultdict(list)  # The line's spelling -> forms.
    spellings = collections.defaultdict(set)  # Lowercased -> the line's spellings.
    for headword, forms in translations.items():
        if not forms or not is_content(headword):
            continue
        seen = {headword} if source_spans(source, headword, strict=False) else set()
        if same_length:
            seen.update(source[b:e] for b, e in source_spans(lowered, headword.lower(),
                                                             strict=False))
        for spelling in seen:
            known = candidates[spelling]
            known.extend(f for f in forms if f not in known)
            spellings[spelling.lower()].add(spelling)
    kept, claimed, taken_forms = [], [], set()
    for spelling in sorted(candidates, key=lambda s: (-len(s), s)):
        if len(spellings[spelling.lower()]) > 1:
            continue
        strict = source_spans(source, spelling)
        if not strict or strict != source_spans(source, spelling, strict=False):
            continue
        targets = [f for f in candidates[spelling]
                   if len(f) >= MIN_TARGET_CHARACTERS and _found_in(reference, f)][:MAX_TARGETS]
        if not targets:
            continue
        if any(b < ce and cb < e for b, e in strict for cb, ce in claimed):
            continue
        if taken_forms.intersection(targets):
            continue
        claimed.extend(strict)
        taken_forms.update(targets)
        kept.append((strict[0][0], {"source": spelling, "targets": targets}))
    return [entry for _, entry in sorted(kept, key=lambda k: k[0])]


def _phrase_keys(line):
    """Every phrase of up to 5 words of `line`, as a dictd index writes headwords."""
    words = index_key(line).split()
    return {" ".join(words[i:i + n]) for n in range(1, 6) for i in range(len(words) - n + 1)}


def make(sources, references, dictionary_prefix, max_lines=None):
    """The benchmark's objects for the test set's lines (see the module's description)."""
    if len(sources) != len(references):
        raise ValueError(f"{len(sources)} source lines, {len(references)} reference lines")
    keys = [_phrase_keys(line) for line in sources]
    translations = read_dictionary(dictionary_prefix, set().union(*keys))
    by_key = collections.defaultdict(dict)
    for headword, forms in translations.items():
        by_key[index_key(headword)][headword] = forms
    objects = []
    for number, (source, reference) in enumerate(zip(sources, references), start=1):
        candidates = {h: f for key in keys[number - 1] for h, f in by_key.get(key, {}).items()}
        glossary = line_glossary(source, reference, candidates)
        if max_lines is not None and not glossary:
            continue
        objects.append({"line": number, "glossary": glossary})
        if max_lines is not None and len(objects) == max_lines:
            break
    return objects


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", help="the JSON Lines file to write (default: stdout)")
    parser.add_argument("--dict", default=DICTIONARY,
                        help="the dictd files' path without .index and .dict.dz")
    parser.add_argument("--source", default=TEST_SET + ".en")
    parser.add_argument("--reference", default=TEST_SET + ".de")
    parser.add_argument("--lines", type=int, help="keep only the first N lines that hold terms")
    args = parser.parse_args()
    with open(args.source, encoding="utf-8") as f:
        sources = f.read().splitlines()
    with open(args.reference, encoding="utf-8") as f:
        references = f.read().splitlines()
    objects = make(sources, references, args.dict, args.lines)
    text = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    entries = sum(len(o["glossary"]) for o in objects)
    occurrences = sum(len(source_spans(sources[o["line"] - 1], e["source"]))
                      for o in objects for e in o["glossary"])
    print(f"{len(objects)} lines, {sum(1 for o in objects if o['glossary'])} with terms, "
          f"{entries} entries, {occurrences} occurrences", file=sys.stderr)


if __name__ == "__main__":
    main()
