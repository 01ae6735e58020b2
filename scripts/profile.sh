#!/usr/bin/env bash
# Where the engine's time goes, phase by phase: mttranslate --benchmark --profile for the rows of
# scripts/benchmark.sh (the embedded model on test_2016_flickr.en, beam 4 and greedy; the
# random-weight OPUS-MT base-shape checkpoint, first BASE_LINES lines (200), forced to 64 tokens,
# beam 4 and greedy), each in float32, int8 and bfloat16, batch 32, 2 workers x 1 thread. Each
# phase's multiply-adds per second are divided by the ceiling benchmark_peak_matmul measures for
# its type on one thread (a worker's), to give its share of the peak.
#
# Writes into OUT_DIR (default /tmp/mtserve-profile):
#   profile.md   a markdown table per row: each phase's share of the decode time and of the peak,
#                per compute type, and the tokens per second;
#   profile.tsv  one line per row, type and phase: row, type, phase, ms, percent, calls, gmac,
#                gmacs (per worker), peak_gmacs, peak_percent, tokens_per_s (what
#                scripts/plot_benchmarks.py reads);
#   raw/         mttranslate's and benchmark_peak_matmul's own output.
# Arguments: the compute types (default: float32 int8 bfloat16). Run after scripts/build.sh, alone
# on the machine: another process on the two cores changes every figure.
# Usage: scripts/profile.sh [OUT_DIR] [TYPE...]
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-/tmp/mtserve-profile}")
shift || true
types=("$@")
[[ $# -gt 0 ]] || types=(float32 int8 bfloat16)
bin=${BUILD_DIR:-build}/bin
for tool in mttranslate benchmark_peak_matmul make_random_checkpoint; do
  [[ -x $bin/$tool ]] || { echo "profile.sh: $bin/$tool missing: run scripts/build.sh" >&2; exit 2; }
done
input=tests/data/multi30k/test_2016_flickr.en
base=${BASE_MODEL_DIR:-/tmp/mtserve-opus-base-random}
[[ -f $base/model.safetensors ]] ||
  "$bin/make_random_checkpoint" --tokenizer_dir=tests/data/opus-mt/en-mg --out="$base" --seed=1
mkdir -p "$out/raw"
base_input="$out/raw/base_input.en"
head -n "${BASE_LINES:-200}" "$input" >"$base_input"

"$bin/benchmark_peak_matmul" --threads=1 | tee "$out/raw/peak.txt"
# ROW TYPE MTTRANSLATE_FLAGS... < INPUT: one row's profile into raw/ROW-TYPE.txt.
run() {
  local row=$1 type=$2
  shift 2
  "$bin/mttranslate" --benchmark --profile --compute_type="$type" --batch_size=32 --threads=2 \
    --workers=2 "$@" 2>"$out/raw/$row-$type.txt" >/dev/null
  grep benchmark "$out/raw/$row-$type.txt"
}
for type in "${types[@]}"; do
  run embedded-beam4 "$type" --beam_size=4 <"$input"
  run embedded-greedy "$type" --beam_size=1 <"$input"
  run base-beam4 "$type" --model="$base" --beam_size=4 --min_length=64 --max_length=64 <"$base_input"
  run base-greedy "$type" --model="$base" --beam_size=1 --min_length=64 --max_length=64 \
    <"$base_input"
done

machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo '?')
python3 - "$out" "$machine" "$commit" "${types[@]}" <<'EOF'
import os, re, sys

out, machine, commit, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = [("embedded-beam4", "embedded, beam 4"), ("embedded-greedy", "embedded, greedy"),
        ("base-beam4", "OPUS-MT base shape, beam 4"), ("base-greedy", "OPUS-MT base shape, greedy")]
peak = {}
for line in open(os.path.join(out, "raw", "peak.txt")):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    peak[fields["type"]] = float(fields["gmacs"])
PHASE = re.compile(r"^(\w+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)$")
records = []  # (row, type, phase, ms, percent, calls, gmac, gmacs, peak, peak_percent, tok/s)
for row, _ in rows:
    for t in types:
        text = open(os.path.join(out, "raw", f"{row}-{t}.txt")).read()
        tokens = float(re.search(r"([\d.]+) target tokens/s", text).group(1))
        for line in text.splitlines():
            m = PHASE.match(line)
            if not m:
                continue
            ms, percent, calls, gmac, gmacs = (float(m.group(i)) for i in range(2, 7))
            share = 100 * gmacs / peak[t] if peak.get(t) else 0.0
            records.append((row, t, m.group(1), ms, percent, int(calls), gmac, gmacs, peak.get(t, 0),
                            share, tokens))
with open(os.path.join(out, "profile.tsv"), "w") as f:
    f.write("row\ttype\tphase\tms\tpercent\tcalls\tgmac\tgmacs\tpeak_gmacs\tpeak_percent\t"
            "tokens_per_s\n")
    for r in records:
        f.write("%s\t%s\t%s\t%.1f\t%.1f\t%d\t%.3f\t%.2f\t%.2f\t%.1f\t%.1f\n" % r)
md = [f"Phase profile: mttranslate --benchmark --profile, batch 32, 2 workers x 1 thread; {machine}; "
      f"mtserve {commit}. Peak: one thread's best oneDNN matmul (benchmark_peak_matmul), "
      + ", ".join(f"{t} {peak.get(t, 0):.1f} GMAC/s" for t in types) + ".", ""]
for row, title in rows:
    mine = [r for r in records if r[0] == row]
    md.append(f"**{title}** (target tokens/s: "
              + ", ".join(f"{t} {next(r[10] for r in mine if r[1] == t):,.0f}" for t in types) + ")")
    md.append("")
    md.append("| phase | " + " | ".join(f"{t} % time" for t in types) + " | "
              + " | ".join(f"{t} % peak" for t in types) + " |")
    md.append("|---|" + "---:|" * (2 * len(types)))
    for phase in dict.fromkeys(r[2] for r in mine):
        cells = {r[1]: r for r in mine if r[2] == phase}
        time_cells = [f"{cells[t][4]:.1f}" for t in types]
        peak_cells = [f"{cells[t][9]:.0f}" if cells[t][6] > 0 else "-" for t in types]
        md.append(f"| {phase} | " + " | ".join(time_cells + peak_cells) + " |")
    md.append("")
open(os.path.join(out, "profile.md"), "w").write("\n".join(md))
print("\n".join(md))
print(f"written: {out}/profile.md, {out}/profile.tsv")
EOF
