#!/usr/bin/python3
"""Many models on one server within a memory budget, as docs/benchmarks.md reports it: N random
checkpoints of one shape (default 20 of the embedded model's) in a model directory, served with
--model_dir and a --model_memory that holds K of them (default 5); requests spread over all the
models at random (a fixed seed) from 8 client threads. Prints the time to a cold model's first
translation and to a warm one's, loads and unloads, the server's peak resident memory against the
budget, and checks every answer against mttranslate's offline output for its model.

With --cold, instead: for each compute type, a fresh server of one such model (not loaded) and
the time of its first request (the load included) and of its second, and the first request to a
second model while a request to a third one is loading it (the loads run one at a time).

With --pivot, instead: the cost of a pivot translation against the two direct calls it stands
for, on one server of the trained models of models/ (2 workers, cache off): each French line of
test_2016_flickr into German through multi30k-fr-en + multi30k-en-de as one request
(target_language de), and as two requests by name (fr-en, then en-de on its answer with
split_sentences false), at concurrency 1 and 8, the two ways alternating in one run (rounds in
the order pivot, direct, direct, pivot, ...). Prints sentences/s and the latency of a line (both
calls' for the direct way), and the lines whose German differs between the two ways (a line the
French rules split into several sentences: the pivot translates each sentence's English on its
own, the second direct call the joined English as one).

Usage: scripts/benchmark_model_repository.py [BUILD_DIR] [--models=20] [--hold=5]
           [--requests=200] [--shape=models/multi30k-en-de] [--compute_type=float32] [--cold]
           [--pivot [--sentences=1000] [--rounds=2]]
  (after scripts/build.sh; --shape=tests/data/opus-mt/en-mg for OPUS-MT base checkpoints; the
  checkpoints are written under $TMPDIR, /tmp by default: an OPUS-MT base one is 150 MB)
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from machine import cpu_model  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

SENTENCES = ["A man rides a bike.", "Two dogs play in the snow.", "A woman sings on a stage."]


def translate(port, name):
    """Seconds to translate SENTENCES with model `name`."""
    body = json.dumps({"model": name, "texts": SENTENCES}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/translate", data=body,
        headers={"Content-Type": "application/json", "X-Request-Timeout": "300s"})
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=300) as answer:
        json.load(answer)
    return time.monotonic() - start


def cold_loads(args):
    bin_dir = os.path.join(args.build_dir, "bin")
    print(f"CPU: {cpu_model()}; models of {os.path.basename(args.shape)}'s shape; "
          f"{len(SENTENCES)} sentences a request")
    print("| compute type | first request (cold load) s | second request s | cold while another "
          "loads s |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="mtserve_cold_") as repository:
        for seed, name in enumerate(["a", "b", "c"], 1):
            subprocess.run([os.path.join(bin_dir, "make_random_checkpoint"),
                            f"--tokenizer_dir={args.shape}", f"--out={repository}/{name}",
                            f"--seed={seed}"], check=True, capture_output=True)
        for compute_type in ("float32", "int8", "bfloat16"):
            with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=2",
                                f"--model_dir={repository}", f"--compute_type={compute_type}",
                                "--max_cold_loads_per_minute=0", "--cache_bytes=0") as server:
                first = translate(server.http_port, "a")
                second = translate(server.http_port, "a")
                with concurrent.futures.ThreadPoolExecutor(2) as pool:
                    loading = pool.submit(translate, server.http_port, "b")
                    time.sleep(0.05)  # b's load starts first; c waits for it.
                    behind = pool.submit(translate, server.http_port, "c").result()
                    loading.result()
            print(f"| {compute_type} | {first:.3f} | {second:.3f} | {behind:.3f} |")
    return 0


def post(port, body):
    """The answer of /v1/translate to `body`."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/translate", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Request-Timeout": "300s"})
    with urllib.request.urlopen(request, timeout=300) as answer:
        return json.load(answer)


def best(answer):
    return answer["translations"][0]["hypotheses"][0]["text"]


def pivot_cost(args):
    bin_dir = os.path.join(args.build_dir, "bin")
    with open(os.path.join(ROOT, "tests", "data", "multi30k", "test_2016_flickr.fr")) as f:
        lines = [line.strip() for line in f if line.strip()][:args.sentences]

    def pivoted(port, line):
        return best(post(port, {"texts": [line], "source_language": "fr",
                                "target_language": "de"}))

    def direct(port, line):
        english = best(post(port, {"model": "multi30k-fr-en", "texts": [line]}))
        return best(post(port, {"model": "multi30k-en-de", "texts": [english],
                                "options": {"split_sentences": False}}))

    def run(port, way, concurrency):
        def timed(line):
            start = time.monotonic()
            german = way(port, line)
            return time.monotonic() - start, german

        start = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            done = list(pool.map(timed, lines))
        wall = time.monotonic() - start
        latencies = sorted(seconds for seconds, _ in done)
        return wall, latencies, [german for _, german in done]

    def quantile(values, q):
        return values[min(len(values) - 1, int(q * len(values)))]

    print(f"CPU: {cpu_model()}; {len(lines)} sentences of test_2016_flickr.fr into German; "
          f"mtserve --model_dir=models --workers=2 --cache_bytes=0 "
          "--language_model=")
    print("| concurrency | way | round | sentences/s | p50 ms | p90 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|")
    unequal = 0
    with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=2",
                        f"--model_dir={os.path.join(ROOT, 'models')}", "--cache_bytes=0",
                        "--max_cold_loads_per_minute=0", "--language_model=") as server:
        direct(server.http_port, lines[0])  # Both models loaded before timing.
        for concurrency in (1, 8):
            outputs = {}
            ways = [("pivot (one call)", pivoted), ("two direct calls", direct)]
            # Rounds in the order A B B A ...: neither way always runs first.
            for round in range(args.rounds):
                for name, way in ways if round % 2 == 0 else ways[::-1]:
                    wall, latencies, outputs[name] = run(server.http_port, way, concurrency)
                    print(f"| {concurrency} | {name} | {round + 1} | {len(lines) / wall:.1f} | "
                          f"{1000 * quantile(latencies, 0.5):.1f} | "
                          f"{1000 * quantile(latencies, 0.9):.1f} | "
                          f"{1000 * quantile(latencies, 0.99):.1f} |")
            for line, (a, b) in zip(lines, zip(*outputs.values())):
                if a != b:
                    unequal += 1
                    print(f"differ at concurrency {concurrency}: {line!r}: pivot {a!r}, "
                          f"direct {b!r}")
    print(f"sentences whose pivot and direct German differ: {unequal} of {2 * len(lines)}; "
          f"load average at the end {os.getloadavg()[0]:.1f}")
    return 1 if unequal else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir", nargs="?", default=os.path.join(ROOT, "build"))
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--hold", type=int, default=5)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--shape", default=os.path.join(ROOT, "models", "multi30k-en-de"))
    parser.add_argument("--compute_type", default="float32")
    parser.add_argument("--cold", action="store_true")
    parser.add_argument("--pivot", action="store_true")
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.cold:
        return cold_loads(args)
    if args.pivot:
        return pivot_cost(args)
    bin_dir = os.path.join(args.build_dir, "bin")
    with tempfile.TemporaryDirectory(prefix="mtserve_repository_") as repository:
        names = [f"m{i:02d}" for i in range(1, args.models + 1)]
        for seed, name in enumerate(names, 1):
            subprocess.run([os.path.join(bin_dir, "make_random_checkpoint"),
                            f"--tokenizer_dir={args.shape}", f"--out={repository}/{name}",
                            f"--seed={seed}"], check=True, capture_output=True)
        # The expectation: each model's offline translation of the sentences.
        expected = {}
        for name in names:
            run = subprocess.run([os.path.join(bin_dir, "mttranslate"),
                                  f"--model={repository}/{name}",
                                  f"--compute_type={args.compute_type}"],
                                 input="\n".join(SENTENCES) + "\n", capture_output=True,
                                 text=True, check=True)
            expected[name] = run.stdout.splitlines()
        # Each model's estimate (they share one shape), for a budget that holds --hold of them.
        sized = subprocess.run([os.path.join(bin_dir, "model_size"), f"{repository}/{names[0]}",
                                args.compute_type], capture_output=True, text=True, check=True)
        size = int(re.search(r"^estimate\s+(\d+) bytes", sized.stdout, re.M).group(1))
        server = MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=2",
                                f"--model_dir={repository}",
                                f"--compute_type={args.compute_type}",
                                "--max_cold_loads_per_minute=0",
                                f"--model_memory={args.hold * size + (1 << 20)}")
        with server:
            rng = random.Random(2026)
            plan = [rng.choice(names) for _ in range(args.requests)]
            cold, warm, wrong = [], [], []
            seen = set()

            def ask(name):
                body = json.dumps({"model": name, "texts": SENTENCES}).encode()
                start = time.monotonic()
                request = urllib.request.Request(
                    f"http://127.0.0.1:{server.http_port}/v1/translate", data=body,
                    headers={"Content-Type": "application/json", "X-Request-Timeout": "300s"})
                with urllib.request.urlopen(request, timeout=300) as answer:
                    got = [t["hypotheses"][0]["text"] for t in json.load(answer)["translations"]]
                return name, time.monotonic() - start, got

            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                for name, seconds, got in pool.map(ask, plan):
                    (warm if name in seen else cold).append(seconds)
                    seen.add(name)
                    if got != expected[name]:
                        wrong.append(name)
            with open(f"/proc/{server.pid}/status") as f:
                peak = int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) << 10
            metrics = server.metrics()
            loads = sum(float(v) for v in re.findall(
                r'^mtserve_model_loads_total\{[^}]*result="ok"[^}]*\} (\S+)', metrics, re.M))
            unloads = sum(float(v) for v in re.findall(
                r"^mtserve_model_unloads_total\{[^}]*\} (\S+)", metrics, re.M))

    def median(values):
        values = sorted(values)
        return values[len(values) // 2] if values else float("nan")

    mib = 1 << 20
    print(f"CPU: {cpu_model()}; {args.models} models of {os.path.basename(args.shape)}'s shape, "
          f"{args.compute_type}, {size / mib:.1f} MiB each; --model_memory for {args.hold}; "
          f"{args.requests} requests of {len(SENTENCES)} sentences from 8 threads")
    print("| answers equal to mttranslate | loads | unloads | first request to a model, median s "
          "| later requests, median s | budget MiB | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {args.requests - len(wrong)} of {args.requests} | {loads:.0f} | {unloads:.0f} | "
          f"{median(cold):.3f} | {median(warm):.3f} | {args.hold * size / mib:.0f} | "
          f"{peak / mib:.0f} |")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
