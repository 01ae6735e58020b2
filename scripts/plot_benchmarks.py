#!/usr/bin/python3
"""Charts of the benchmark tools' output, as PNG files for docs/benchmarks.md:

- profile.png from scripts/profile.sh's profile.tsv: a stacked bar per row and compute type of
  the share of the decode time each phase took;
- peers.png from what scripts/benchmark-peers.sh printed: grouped bars of target tokens per
  second, mtserve beside CTranslate2, per row and compute type (the best of the rounds; for
  CTranslate2 also the better of its kernels; it has no bfloat16 on CPU).

Needs Debian's python3-matplotlib (apt-get install python3-matplotlib), hence /usr/bin/python3.

Usage: scripts/plot_benchmarks.py [--profile PROFILE_TSV] [--peers PEERS_OUTPUT] [--out DIR]
(DIR: docs/images by default; give at least one input).
"""
import argparse
import csv
import os
import re
import sys

ROWS = [("embedded-beam4", "embedded\nbeam 4"), ("embedded-greedy", "embedded\ngreedy"),
        ("base-beam4", "base shape\nbeam 4"), ("base-greedy", "base shape\ngreedy")]
TYPES = ["float32", "int8", "bfloat16"]


def read_profile(path):
    """{(row, type): [(phase, percent of the decode time)]} from profile.sh's profile.tsv."""
    shares = {}
    with open(path, encoding="utf-8") as f:
        for record in csv.DictReader(f, delimiter="\t"):
            shares.setdefault((record["row"], record["type"]), []).append(
                (record["phase"], float(record["percent"])))
    return shares


# benchmark-peers.sh's lines: a CTranslate2 section per model and kernel set (the embedded model's
# first, then the base shape's, each "default" then forced ISAs), its table rows
# ("| int8_beam4 | ... | tok/s med (best) | ..."), then mttranslate's lines, four per type in
# scripts/benchmark.sh's order (embedded beam 4, embedded greedy, base beam 4, base greedy).
CT2_SECTION = re.compile(r"^CTranslate2, kernels: (\S+)")
CT2_ROW = re.compile(r"^\|\s*(float32|int8)_beam(\d+)\s*\|(?:[^|]*\|){4}\s*[\d.]+\s*\(([\d.]+)\)")
MTSERVE_LINE = re.compile(r"mttranslate benchmark: .* ([\d.]+) target tokens/s;.* beam (\d+),.*, "
                          r"(float32|bfloat16|int8)$")


def beam_row(model, beam):
    return f"{model}-{'beam4' if beam == 4 else 'greedy'}"


def read_peers(path):
    """{(engine, row, type): best target tokens/s} from benchmark-peers.sh's output."""
    best = {}
    model = None
    ct2_sections = 0  # CTranslate2 sections of "default" kernels this round: the model's index.
    mtserve_lines = {}  # Per type, this round's mttranslate lines so far.

    def keep(key, value):
        best[key] = max(best.get(key, 0.0), value)

    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("== round"):
                ct2_sections = 0
                mtserve_lines = {}
                continue
            section = CT2_SECTION.match(line)
            if section:
                if section.group(1) == "default":
                    ct2_sections += 1
                model = "embedded" if ct2_sections <= 1 else "base"
                continue
            row = CT2_ROW.match(line)
            if row and model:
                keep(("CTranslate2", beam_row(model, int(row.group(2))), row.group(1)),
                     float(row.group(3)))
                continue
            mine = MTSERVE_LINE.search(line)
            if mine:
                compute_type = mine.group(3)
                index = mtserve_lines.get(compute_type, 0)
                mtserve_lines[compute_type] = index + 1
                keep(("mtserve", beam_row("embedded" if index % 4 < 2 else "base",
                                          int(mine.group(2))), compute_type),
                     float(mine.group(1)))
    return best


def plot_profile(plt, shares, path):
    bars = [(row, t) for row, _ in ROWS for t in TYPES if (row, t) in shares]
    if not bars:
        sys.exit("plot_benchmarks: no rows in the profile")
    phases = list(dict.fromkeys(phase for bar in bars for phase, _ in shares[bar]))
    figure, axes = plt.subplots(figsize=(max(8, 0.75 * len(bars) + 3), 5.5))
    colours = plt.get_cmap("tab20").colors
    bottoms = [0.0] * len(bars)
    for i, phase in enumerate(phases):
        values = [dict(shares[bar]).get(phase, 0.0) for bar in bars]
        axes.bar(range(len(bars)), values, bottom=bottoms, label=phase.replace("_", " "),
                 color=colours[i % len(colours)])
        bottoms = [b + v for b, v in zip(bottoms, values)]
    labels = dict(ROWS)
    axes.set_xticks(range(len(bars)))
    axes.set_xticklabels([f"{labels[row]}\n{t}" for row, t in bars], fontsize=8)
    axes.set_ylabel("% of decode time")
    axes.set_ylim(0, 100)
    axes.set_title("Where the decode time goes, per phase (mttranslate --profile)")
    axes.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"written: {path}")


def plot_peers(plt, best, path):
    groups = [(row, t) for row, _ in ROWS for t in TYPES
              if any((engine, row, t) in best for engine in ("mtserve", "CTranslate2"))]
    if not groups:
        sys.exit("plot_benchmarks: no benchmark lines in the peers' output")
    figure, axes = plt.subplots(figsize=(max(8, 0.9 * len(groups) + 2), 5))
    width = 0.4
    for offset, engine, colour in ((-width / 2, "CTranslate2", "#999999"),
                                   (width / 2, "mtserve", "#1f77b4")):
        xs = [i + offset for i, group in enumerate(groups) if (engine, *group) in best]
        values = [best[(engine, *group)] for group in groups if (engine, *group) in best]
        axes.bar(xs, values, width, label=engine, color=colour)
    labels = dict(ROWS)
    axes.set_xticks(range(len(groups)))
    axes.set_xticklabels([f"{labels[row]}\n{t}" for row, t in groups], fontsize=8)
    axes.set_ylabel("target tokens/s")
    axes.set_title("mtserve and CTranslate2, side by side (scripts/benchmark-peers.sh)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"written: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", help="scripts/profile.sh's profile.tsv")
    parser.add_argument("--peers", help="a file of scripts/benchmark-peers.sh's output")
    parser.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "images"))
    args = parser.parse_args()
    if not args.profile and not args.peers:
        parser.error("give --profile, --peers or both")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_benchmarks: needs matplotlib: apt-get install python3-matplotlib")
    os.makedirs(args.out, exist_ok=True)
    if args.profile:
        plot_profile(plt, read_profile(args.profile), os.path.join(args.out, "profile.png"))
    if args.peers:
        plot_peers(plt, read_peers(args.peers), os.path.join(args.out, "peers.png"))


if __name__ == "__main__":
    main()
