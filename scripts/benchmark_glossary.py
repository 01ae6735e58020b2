#!/usr/bin/env python3
"""Glossaries end to end (docs/benchmarks.md#glossaries): Multi30k's test_2016_flickr through one
mtserve on the embedded model (--cache_bytes=0), each line its own request to POST /v1/translate
with its own terms in options.glossary, CONCURRENCY requests at a time; the terms are those
tools/make_glossary_benchmark.py draws from Debian's FreeDict English-German dictionary (entries
whose English word is in the line and whose German word is in the reference), made into a
temporary file unless --glossary gives one.

For beam 4 and greedy, without and with the terms, prints:
  term hits    occurrences of an entry's source whose translation holds one of its target forms
               as written (two occurrences need two; the first letter's case may differ at the
               start of a sentence: the sentences the answer reports), over all occurrences;
               without terms, how often the model writes them anyway
  BLEU         corpus BLEU-4 against the reference, sacreBLEU's default (scripts/lib/bleu.py)
  sentences/s  the sentences the server reports, over the wall time from the first request to
               the last answer (best of ROUNDS rounds, the runs with and without terms
               alternating in each)
  unmet lines  lines whose best translation misses a term (the guarantee says none)
  unchanged    with terms: of the lines whose translation without them already holds them all,
               those translated the same with them

Run after scripts/build.sh. Until the server honours options.glossary it ignores the field (the
runs with terms then equal those without: the script says so) or refuses it (the script stops
with the server's answer).

Usage: scripts/benchmark_glossary.py [BUILD_DIR] [--concurrency=8] [--rounds=2]
           [--glossary=FILE.jsonl] [--lines=N] [--beam_size=4]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from bleu import corpus_bleu  # noqa: E402
from glossary_terms import entry_counts, sentence_starts_from_ranges  # noqa: E402
from machine import cpu_model  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

TEST_SET = os.path.join(ROOT, "tests", "data", "multi30k", "test_2016_flickr")


class Refused(Exception):
    pass


def translate(port, text, options):
    """(translation, sentence starts in it, sentences) of one text by POST /v1/translate."""
    body = json.dumps({"texts": [text], "options": options}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/translate", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            answer = json.load(response)
    except urllib.error.HTTPError as e:
        raise Refused(f"{e.code} {e.read().decode(errors='replace')[:500]} for {body[:300]!r}")
    translation = answer["translations"][0]
    best = translation["hypotheses"][0]
    text = best["text"]
    ranges = best.get("sentences", [])
    return text, sentence_starts_from_ranges(text, ranges), max(1, len(translation["sentences"]))


def run(port, sources, glossaries, options, concurrency):
    """(seconds, [(translation, sentence starts)], sentences) of the test set, one line a request;
    a line's glossary sent in options.glossary when `glossaries` is given."""
    def one(i):
        line_options = dict(options)
        if glossaries is not None and glossaries[i]:
            line_options["glossary"] = glossaries[i]
        return translate(port, sources[i], line_options)

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        answers = list(pool.map(one, range(len(sources))))
    seconds = time.monotonic() - start
    return seconds, [(a[0], a[1]) for a in answers], sum(a[2] for a in answers)


def term_hits(sources, glossaries, translations):
    """(hits, occurrences, lines with a term unmet, the first few of those lines)."""
    hits = occurrences = unmet = 0
    examples = []
    for i, (source, glossary, (translation, starts)) in enumerate(
            zip(sources, glossaries, translations)):
        line_unmet = []
        for entry in glossary:
            found, met = entry_counts(source, entry, translation, starts)
            occurrences += found
            hits += met
            if met < found:
                line_unmet.append(entry)
        if line_unmet:
            unmet += 1
            if len(examples) < 5:
                examples.append(f"line {i + 1}: {source!r} -> {translation!r}, unmet "
                                f"{[(e['source'], e['targets']) for e in line_unmet]}")
    return hits, occurrences, unmet, examples


def unchanged(sources, glossaries, without, with_terms):
    """(lines whose translation `without` terms holds them all, those of them the same
    `with_terms`)."""
    held = same = 0
    for source, glossary, plain, constrained in zip(sources, glossaries, without, with_terms):
        if glossary and all(found == met for found, met in (
                entry_counts(source, entry, plain[0], plain[1]) for entry in glossary)):
            held += 1
            same += plain[0] == constrained[0]
    return held, same


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--glossary", help="the terms (tools/make_glossary_benchmark.py's "
                                           "output); made from the dictionary by default")
    parser.add_argument("--lines", type=int, help="only the test set's first N lines")
    parser.add_argument("--beam_size", type=int, default=4, help="the beam search's width")
    args = parser.parse_args()
    searches = [(f"beam {args.beam_size}", {"beam_size": args.beam_size}),
                ("greedy", {"beam_size": 1})]

    with open(TEST_SET + ".en", encoding="utf-8") as f:
        sources = f.read().splitlines()
    with open(TEST_SET + ".de", encoding="utf-8") as f:
        references = f.read().splitlines()
    with tempfile.TemporaryDirectory(prefix="mtserve_glossary_") as tmp:
        path = args.glossary
        if path is None:
            path = os.path.join(tmp, "terms.jsonl")
            subprocess.run([sys.executable, os.path.join(ROOT, "tools",
                                                         "make_glossary_benchmark.py"), path],
                           check=True)
        glossaries = [[] for _ in sources]
        with open(path, encoding="utf-8") as f:
            for row in f:
                item = json.loads(row)
                glossaries[item["line"] - 1] = item["glossary"]
    if args.lines:
        sources, references, glossaries = (sources[:args.lines], references[:args.lines],
                                           glossaries[:args.lines])
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"# {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} cores, commit "
          f"{commit}; {len(sources)} lines, {sum(1 for g in glossaries if g)} with terms, "
          f"{sum(len(g) for g in glossaries)} entries; one line a request, "
          f"{args.concurrency} at a time; best of {args.rounds} rounds", flush=True)

    best, outputs = {}, {}
    with MtserveProcess(os.path.join(args.build, "bin", "mtserve"), "--cache_bytes=0") as server:
        try:
            run(server.http_port, sources[:64], None, {"beam_size": 4}, args.concurrency)
            for r in range(args.rounds):
                for name, options in searches:
                    for terms in (False, True):
                        seconds, translations, sentences = run(
                            server.http_port, sources, glossaries if terms else None, options,
                            args.concurrency)
                        key = (name, terms)
                        best[key] = min(best.get(key, seconds), seconds)
                        outputs[key] = (translations, sentences)
                        print(f"round {r + 1} {name} {'with' if terms else 'without'} terms: "
                              f"{seconds:.2f} s, {sentences / seconds:.1f} sentences/s",
                              flush=True)
        except Refused as e:
            sys.exit(f"benchmark_glossary: the server refused a request: {e}")

    print(f"{'search':<8} {'terms':<8} {'term hits':>18} {'BLEU':>6} {'sentences/s':>12} "
          f"{'unmet lines':>12} {'unchanged':>10}")
    for name, _ in searches:
        for terms in (False, True):
            translations, sentences = outputs[(name, terms)]
            hits, occurrences, unmet, examples = term_hits(sources, glossaries, translations)
            bleu = corpus_bleu([t for t, _ in translations], references)
            rate = f"{hits}/{occurrences} {100 * hits / max(1, occurrences):.1f}%"
            print(f"{name:<8} {'with' if terms else 'without':<8} {rate:>18} {bleu:>6.2f} "
                  f"{sentences / best[(name, terms)]:>12.1f} {unmet:>12}", end="")
            if terms:
                held, same = unchanged(sources, glossaries, outputs[(name, False)][0],
                                       translations)
                print(f" {same:>4}/{held}", end="")
            print()
            if terms:
                for example in examples:
                    print(f"  {example}", file=sys.stderr)
        if outputs[(name, True)][0] == outputs[(name, False)][0]:
            print(f"# {name}: the translations with terms equal those without: this server "
                  f"ignores options.glossary")


if __name__ == "__main__":
    main()
