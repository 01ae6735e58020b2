#!/usr/bin/env python3
"""Served against offline throughput, and one sentence's latency served against offline, as
docs/benchmarks.md ("Served against offline") describes.

Throughput: for each compute type and each concurrency, PAIRS alternating pairs of
  offline  mttranslate --benchmark on INPUT (beam 4, --threads=2: two workers of one thread, the
           layout mtserve's default gives two cores), and
  served   mtclient bench on the same INPUT against one mtserve per compute type (cache off,
           metrics off; its default layout), --requests = INPUT's lines, one sentence a request,
then the median ratio served / offline target tokens per second. Client and server share the
machine: the client's CPU seconds (its rusage) are printed as a share of the run's CPU (client
plus server, the server's read from /proc over the same run).

Latency: one sentence (LATENCY_LINE of INPUT) alone, PAIRS alternating pairs of
  offline  mttranslate --benchmark --threads=1 --batch_size=1 on the sentence repeated 2 x REPEAT
           times and REPEAT times (one worker of one thread, as a served request at concurrency 1
           is decoded): the difference of their seconds / REPEAT, and
  served   mtclient bench --concurrency=1 --requests=REPEAT on that sentence: its p50,
and the median ratio served / offline; with each pair, the CPU milliseconds per sentence of
mttranslate (the same difference), of the server and of the client.

Usage: scripts/benchmark_serving.py [--build_dir=build] [--compute_types=float32,int8,bfloat16]
  [--concurrency=1,8,32] [--pairs=3] [--input=FILE] [--requests=N] [--latency_line=N]
  [--repeat=50] [--model=DIR] [--server_flags="--max_queue_delay=0 ..."]
  [--decoding_flags="--min_length=64 --max_length=64"]

--decoding_flags go to both sides (mttranslate and mtclient bench take the same decoding flags):
the random-weight OPUS-MT base-shape checkpoint of scripts/benchmark.sh is measured forced to 64
tokens, as there.
"""
import argparse
import datetime
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from machine import cpu_model  # noqa: E402
from mtserve_process import MtserveProcess, cpu_seconds  # noqa: E402

BEAM = 4
# mttranslate --benchmark's line: "... N target tokens in S s: X sentences/s, Y target tokens/s".
OFFLINE_RE = re.compile(r"(\d+) target tokens in ([0-9.]+) s: [0-9.]+ sentences/s, "
                        r"([0-9.]+) target tokens/s")


def run(command, stdin_path=None):
    """Runs `command` (a list) to its end; (stdout, stderr, its CPU seconds: user + system)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            open(stdin_path or os.devnull, "rb") as stdin:
        process = subprocess.Popen(command, stdin=stdin, stdout=out, stderr=err, cwd=ROOT)
        # wait4 reaps it: its rusage is the whole run's, its children's included.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        out_text, err_text = out.read().decode(errors="replace"), err.read().decode(
            errors="replace")
    if process.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} exited with {process.returncode}:\n{err_text}")
    return out_text, err_text, usage.ru_utime + usage.ru_stime


def offline(args, compute_type, input_path, extra=()):
    """mttranslate --benchmark on `input_path`: (target tokens, seconds, tok/s, CPU seconds,
    command)."""
    command = [os.path.join(args.build_dir, "bin", "mttranslate"), "--benchmark",
               f"--beam_size={BEAM}", f"--compute_type={compute_type}", *args.model_flag,
               *args.decoding_flags, *extra]
    _, err, cpu = run(command, input_path)
    match = OFFLINE_RE.search(err)
    if not match:
        raise RuntimeError(f"no benchmark line from mttranslate:\n{err}")
    return (int(match.group(1)), float(match.group(2)), float(match.group(3)), cpu,
            shlex.join(command) + " < " + input_path)


def served(args, server, input_path, concurrency, requests):
    """mtclient bench against `server`: (its report as a dict, client CPU s, server CPU s,
    command), the CPU seconds without the share of mtclient's warmup requests (one per client: 32
    of 1,000 at concurrency 32), which its figures leave out, by count."""
    command = [os.path.join(args.build_dir, "bin", "mtclient"), "bench",
               f"--server=127.0.0.1:{server.grpc_port}", f"--input={input_path}",
               f"--concurrency={concurrency}", f"--requests={requests}", f"--beam_size={BEAM}",
               *args.decoding_flags]
    server_before = cpu_seconds(server.pid)
    out, _, client_cpu = run(command)
    server_cpu = cpu_seconds(server.pid) - server_before
    report = {}
    for line in out.splitlines():
        key, _, value = line.partition(":")
        report[key.strip()] = value.strip()
    if int(report.get("failed_requests", "1")) != 0:
        raise RuntimeError(f"requests failed:\n{out}")
    measured = int(report["requests"])
    kept = measured / (measured + int(report["warmup_requests"]))
    return report, client_cpu * kept, server_cpu * kept, shlex.join(command)


def throughput(args, compute_type, server, lines):
    """Prints every pair and the medians for `compute_type`; returns {concurrency: ratio}."""
    medians = {}
    for concurrency in args.concurrency:
        ratios, cpu_ratios = [], []
        for pair in range(args.pairs):
            tokens, seconds, offline_rate, offline_cpu, offline_command = offline(
                args, compute_type, args.input)
            report, client_cpu, server_cpu, served_command = served(
                args, server, args.input, concurrency, args.requests or lines)
            served_rate = float(report["target_tokens_per_s"])
            ratio = served_rate / offline_rate
            ratios.append(ratio)
            share = client_cpu / (client_cpu + server_cpu)
            # Tokens per CPU second, each side's own: less moved by other load on the machine.
            cpu_ratio = (int(report["target_tokens"]) / server_cpu) / (tokens / offline_cpu)
            cpu_ratios.append(cpu_ratio)
            print(f"  c={concurrency:<3} pair {pair + 1}: offline {offline_rate:9.1f} tok/s "
                  f"({tokens} tokens, {seconds:.3f} s); served {served_rate:9.1f} tok/s "
                  f"({report['target_tokens']} tokens, {report['duration_s']} s, "
                  f"p50 {report['latency_p50_ms']} ms); ratio {ratio:.3f}; per CPU s {cpu_ratio:.3f} "
                  f"(offline {offline_cpu:.2f} s, server {server_cpu:.2f} s); client CPU "
                  f"{client_cpu:.2f} s = {share:.1%} of the run's (served CPU without warmup)",
                  flush=True)
            if pair == 0 and concurrency == args.concurrency[0]:
                print(f"    offline: {offline_command}\n    served:  {served_command}")
        medians[concurrency] = (statistics.median(ratios), statistics.median(cpu_ratios))
    return medians


def latency(args, compute_type, server, sentence):
    """Prints every pair and the median ratio served p50 / offline per sentence."""
    with tempfile.TemporaryDirectory(prefix="benchmark_serving_") as tmp:
        one = os.path.join(tmp, "one.txt")
        with open(one, "w") as f:
            f.write(sentence + "\n")
        repeated = {}
        for times in (args.repeat, 2 * args.repeat):
            repeated[times] = os.path.join(tmp, f"repeated{times}.txt")
            with open(repeated[times], "w") as f:
                f.write((sentence + "\n") * times)
        ratios = []
        for pair in range(args.pairs):
            # The difference of two runs: what a run pays once (its translator's first use) is
            # left out, as the served run's warmup leaves it out.
            seconds, cpu = {}, {}
            for times, path in repeated.items():
                _, seconds[times], _, cpu[times], offline_command = offline(
                    args, compute_type, path, ("--threads=1", "--batch_size=1"))
            offline_ms = (seconds[2 * args.repeat] - seconds[args.repeat]) * 1000 / args.repeat
            offline_cpu_ms = (cpu[2 * args.repeat] - cpu[args.repeat]) * 1000 / args.repeat
            report, client_cpu, server_cpu, served_command = served(args, server, one, 1,
                                                                    args.repeat)
            served_ms = float(report["latency_p50_ms"])
            served_cpu_ms = server_cpu * 1000 / args.repeat
            ratios.append(served_ms / offline_ms)
            print(f"  latency pair {pair + 1}: offline {offline_ms:.2f} ms/sentence; served p50 "
                  f"{served_ms:.2f} ms (p90 {report['latency_p90_ms']} ms); ratio "
                  f"{ratios[-1]:.3f}; CPU ms per sentence: offline {offline_cpu_ms:.2f}, server "
                  f"{served_cpu_ms:.2f}, client {client_cpu * 1000 / args.repeat:.2f}",
                  flush=True)
            if pair == 0:
                print(f"    offline: {offline_command}   (its seconds less those of "
                      f"{args.repeat} lines, / {args.repeat})\n"
                      f"    served:  {served_command}   (p50)")
    return statistics.median(ratios)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build_dir", default="build")
    parser.add_argument("--compute_types", default="float32,int8,bfloat16")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--input", default="tests/data/multi30k/test_2016_flickr.en")
    parser.add_argument("--requests", type=int, default=0,
                        help="served requests per run (default: the input's lines)")
    parser.add_argument("--latency_line", type=int, default=1,
                        help="the input's line (from 1) whose latency is measured; 0: none")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--model", default="", help="a model directory (default: embedded)")
    parser.add_argument("--server_flags", default="",
                        help="more mtserve flags, space-separated (e.g. --max_queue_delay=0)")
    parser.add_argument("--decoding_flags", default="",
                        help="decoding flags for both mttranslate and mtclient bench, "
                        "space-separated (e.g. --min_length=64 --max_length=64)")
    args = parser.parse_args()
    args.build_dir = os.path.join(ROOT, args.build_dir)
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    args.model_flag = [f"--model={args.model}"] if args.model else []
    args.decoding_flags = shlex.split(args.decoding_flags)
    with open(os.path.join(ROOT, args.input)) as f:
        input_lines = f.read().splitlines()
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    print(f"served against offline: {cpu_model()}, {os.cpu_count()} CPUs; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; commit {commit}")
    print(f"input {args.input} ({len(input_lines)} lines), beam {BEAM}, {args.pairs} pairs "
          f"(offline then served) per row; ratio = served / offline target tokens/s")

    summary = []
    for compute_type in args.compute_types.split(","):
        binary = os.path.join(args.build_dir, "bin", "mtserve")
        flags = ["--cache_bytes=0", "--metrics_listen=", f"--compute_type={compute_type}",
                 *args.model_flag, *shlex.split(args.server_flags)]
        print(f"\n{compute_type}: server {shlex.join([binary, *flags])} "
              f"(on loopback ports the kernel chooses)", flush=True)
        with MtserveProcess(binary, *flags) as server:
            ratios = throughput(args, compute_type, server, len(input_lines))
            latency_ratio = None
            if args.latency_line > 0:
                latency_ratio = latency(args, compute_type, server,
                                        input_lines[args.latency_line - 1])
        summary.append((compute_type, ratios, latency_ratio))

    print("\nmedian served / offline: target tokens/s at each concurrency (in brackets: per CPU "
          "second, the server's against mttranslate's), and one sentence's latency")
    print(f"{'type':<10}" + "".join(f"{'c=' + str(c):>16}" for c in args.concurrency) +
          f"{'latency':>9}")
    for compute_type, ratios, latency_ratio in summary:
        print(f"{compute_type:<10}" +
              "".join(f"{ratios[c][0]:8.3f} ({ratios[c][1]:.3f})" for c in args.concurrency) +
              (f"{latency_ratio:9.3f}" if latency_ratio is not None else f"{'-':>9}"))


if __name__ == "__main__":
    main()
