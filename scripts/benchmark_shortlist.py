#!/usr/bin/env python3
"""A lexical shortlist's quality and speed (docs/benchmarks.md#lexical-shortlists): each model's
test_2016_flickr translated by mttranslate with the full vocabulary (--shortlist=false) and with a
vocabulary map (vmap.txt) in each compute type, printed as a markdown table:

  list         the vocabulary map's size: targets always allowed, rules (source pieces) and the
               mean targets of a rule
  BLEU         corpus BLEU-4 against the reference, sacreBLEU's default (scripts/lib/bleu.py),
               full vocabulary / with the list, and the difference
  identical    lines translated the same both ways
  tokens/s     target tokens per second both ways (mttranslate --benchmark; best of ROUNDS rounds,
               the two alternating in each) and their ratio

The list is a model's tests/data/shortlists/MODEL/vmap.txt with --shortlists=tests/data/shortlists,
else derived by build/bin/make_shortlist from the Multi30k train side of the model's source
language (--train_dir; never a test set) with --frequent, --per_source and --min_count. It is
placed in a temporary copy of the model directory (scripts/lib/model_with_list.py), which the
engine reads it from.

Usage: scripts/benchmark_shortlist.py [BUILD_DIR] [--models DIR ...]
           [--compute_types float32,int8,bfloat16] [--shortlists DIR]
           [--train_dir ../shared/data/multi30k] [--frequent 800] [--per_source 10]
           [--min_count 1] [--counting neighbours] [--beam_size 4] [--threads 2] [--rounds 1]
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from bleu import corpus_bleu  # noqa: E402
from machine import cpu_model  # noqa: E402
from model_with_list import model_with_list  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), "shared")
DEFAULT_MODELS = [os.path.join(SHARED, "models", f"multi30k-{pair}")
                  for pair in ("en-de", "de-en", "fr-en")]
TEST_SET_DIRS = [os.path.join(ROOT, "tests", "data", "multi30k"),
                 os.path.join(SHARED, "data", "multi30k")]
BENCHMARK = re.compile(r"mttranslate benchmark: .* ([0-9.]+) target tokens/s")


def test_set(language):
    """The lines of test_2016_flickr in `language`, from the first directory that has it."""
    for directory in TEST_SET_DIRS:
        path = os.path.join(directory, f"test_2016_flickr.{language}")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return f.read().splitlines()
    sys.exit(f"benchmark_shortlist: no test_2016_flickr.{language} in {TEST_SET_DIRS}")


def languages(model_dir):
    """(source, target) language of a model, from tokenizer_config.json (else its directory's
    name, ...-SRC-TGT)."""
    path = os.path.join(model_dir, "tokenizer_config.json")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
        if "source_lang" in config and "target_lang" in config:
            return config["source_lang"], config["target_lang"]
    return tuple(os.path.basename(os.path.normpath(model_dir)).split("-")[-2:])


def has_shortlist_flag(mttranslate):
    """Whether this mttranslate takes --shortlist (the full vocabulary with --shortlist=false)."""
    helped = subprocess.run([mttranslate, "--helpfull"], capture_output=True, text=True)
    return re.search(r"^\s*--shortlist\b", helped.stdout + helped.stderr, re.M) is not None


def list_size(vmap):
    """(targets always allowed, rules, mean targets of a rule) of a vocabulary map."""
    always, rules, targets = 0, 0, 0
    with open(vmap, encoding="utf-8") as f:
        for line in f:
            source, _, listed = line.rstrip("\n").partition("\t")
            if source:
                rules += 1
                targets += len(listed.split())
            else:
                always += len(listed.split())
    return always, rules, targets / max(1, rules)


def translate(mttranslate, model_dir, sources, compute_type, args, extra):
    """(translations, target tokens/s) of `sources` by mttranslate --benchmark."""
    command = [mttranslate, f"--model={model_dir}", f"--compute_type={compute_type}",
               f"--beam_size={args.beam_size}", f"--threads={args.threads}", "--benchmark"] + extra
    done = subprocess.run(command, input="\n".join(sources) + "\n", capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.exit(f"benchmark_shortlist: {shlex.join(command)} failed:\n{done.stderr}")
    match = BENCHMARK.search(done.stderr)
    if not match:
        sys.exit(f"benchmark_shortlist: no throughput in mttranslate's stderr:\n{done.stderr}")
    return done.stdout.splitlines(), float(match.group(1))


def derive(build, model_dir, language, out, args):
    """Derives `out` (vmap.txt) for `model_dir` from the train side in `language`."""
    train = os.path.join(args.train_dir, f"train.{language}")
    if not os.path.exists(train):
        sys.exit(f"benchmark_shortlist: {train} is missing (--train_dir)")
    command = [os.path.join(build, "bin", "make_shortlist"), f"--model={model_dir}",
               f"--input={train}", f"--output={out}", f"--frequent={args.frequent}",
               f"--per_source={args.per_source}", f"--min_count={args.min_count}",
               f"--counting={args.counting}", f"--beam_size={args.beam_size}",
               f"--threads={args.threads}"]
    print(f"# {shlex.join(command)}", flush=True)
    subprocess.run(command, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    parser.add_argument("--compute_types", default="float32,int8,bfloat16")
    parser.add_argument("--shortlists", help="a directory of MODEL/vmap.txt to use instead of "
                                             "deriving the lists")
    parser.add_argument("--train_dir", default=os.path.join(SHARED, "data", "multi30k"))
    parser.add_argument("--frequent", type=int, default=800)
    parser.add_argument("--per_source", type=int, default=10)
    parser.add_argument("--min_count", type=int, default=1)
    parser.add_argument("--counting", default="neighbours")
    parser.add_argument("--beam_size", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    mttranslate = os.path.join(args.build, "bin", "mttranslate")
    switch = has_shortlist_flag(mttranslate)

    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    print(f"# {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} cores, commit "
          f"{commit}; beam {args.beam_size}, {args.threads} threads, best of {args.rounds} "
          f"round(s)\n# {shlex.join([sys.argv[0]] + sys.argv[1:])}", flush=True)
    if not switch:
        print("# this mttranslate has no --shortlist flag: both columns are the full vocabulary",
              flush=True)

    rows = []
    with tempfile.TemporaryDirectory(prefix="mtserve_shortlist_") as tmp:
        for model_dir in args.models:
            name = os.path.basename(os.path.normpath(model_dir))
            source, target = languages(model_dir)
            if args.shortlists:
                vmap = os.path.join(args.shortlists, name, "vmap.txt")
            else:
                vmap = os.path.join(tmp, f"{name}.vmap.txt")
                derive(args.build, model_dir, source, vmap, args)
            listed = model_with_list(model_dir, vmap, os.path.join(tmp, name))
            sources, references = test_set(source), test_set(target)
            always, rules, per_rule = list_size(vmap)
            for compute_type in args.compute_types.split(","):
                best, outputs = {}, {}
                for _ in range(args.rounds):
                    for way in ("full", "list"):
                        extra = ["--shortlist=false"] if way == "full" and switch else []
                        outputs[way], rate = translate(
                            mttranslate, listed if way == "list" else model_dir, sources,
                            compute_type, args, extra)
                        best[way] = max(best.get(way, 0), rate)
                bleu = {way: corpus_bleu(outputs[way], references) for way in outputs}
                same = sum(a == b for a, b in zip(outputs["full"], outputs["list"]))
                rows.append((name, compute_type, f"{always} + {rules} x {per_rule:.1f}",
                             bleu["full"], bleu["list"], same, len(sources), best["full"],
                             best["list"]))
                print(f"# {name} {compute_type}: BLEU {bleu['full']:.2f} / {bleu['list']:.2f}, "
                      f"{same}/{len(sources)} identical, {best['full']:.0f} / "
                      f"{best['list']:.0f} tokens/s", flush=True)

    print("\n| model | type | list (always + rules x targets) | BLEU full | BLEU list | diff "
          "| identical lines | tokens/s full | tokens/s list | speed-up |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, compute_type, size, full, short, same, lines, rate_full, rate_list in rows:
        print(f"| {name} | {compute_type} | {size} | {full:.2f} | {short:.2f} | "
              f"{short - full:+.2f} | {same}/{lines} ({100 * same / lines:.1f} %) | "
              f"{rate_full:,.0f} | {rate_list:,.0f} | {rate_list / rate_full:.2f} |")


if __name__ == "__main__":
    main()
