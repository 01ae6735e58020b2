#!/usr/bin/env python3
"""Documents under load, as the README reports them: the Multi30k test lines (1,000 sentences)
sent three ways to one mtserve (2 workers, cache off, beam 4):

  sentences   one sentence a request (what a caller had to do before sentence splitting)
  paragraphs  one paragraph of 3 to 8 sentences a request
  document    the whole set as one text, one request

at concurrency 1 and 32 (the document at 1 only: 32 of them would not fit the queue). Prints
sentences/s, latency and, for the document, the CPU cores the server kept busy (both workers
should work on one long text). Run after scripts/build.sh.

Usage: scripts/benchmark_documents.py [BUILD_DIR]
"""
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from machine import cpu_model  # noqa: E402
from mtserve_process import MtserveProcess, cpu_seconds  # noqa: E402


def paragraphs(lines):
    """Consecutive lines joined by spaces, 3, 4, ..., 8, 3, ... at a time."""
    out, i, n = [], 0, 3
    while i < len(lines):
        out.append(" ".join(lines[i:i + n]))
        i += n
        n = 3 if n == 8 else n + 1
    return out


def bench(mtclient, port, texts_file, concurrency, requests):
    report = subprocess.run(
        [mtclient, "bench", f"--server=127.0.0.1:{port}", f"--input={texts_file}",
         "--beam_size=4", f"--concurrency={concurrency}", f"--requests={requests}",
         f"--warmup={min(requests, concurrency)}", "--timeout=600"],
        check=True, capture_output=True, text=True).stdout
    return {k: v for k, v in re.findall(r"^(\w+):\s+(\S+)", report, re.M)}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    mtserve, mtclient = os.path.join(build, "bin", "mtserve"), os.path.join(build, "bin", "mtclient")
    with open(os.path.join(ROOT, "tests", "data", "multi30k", "test_2016_flickr.en")) as f:
        lines = [line.strip() for line in f if line.strip()]
    paras = paragraphs(lines)
    with tempfile.TemporaryDirectory(prefix="mtserve_docs_") as tmp:
        files = {}
        # mtclient bench sends each line of its input as a text: the document is one line, its
        # paragraphs separated by spaces.
        for name, texts in [("sentences", lines), ("paragraphs", paras),
                            ("document", [" ".join(paras)])]:
            files[name] = os.path.join(tmp, name)
            with open(files[name], "w") as f:
                f.write("\n".join(texts) + "\n")
        cpu = cpu_model()
        print(f"# {time.strftime('%Y-%m-%d')}, {cpu}, {os.cpu_count()} cores; "
              f"{len(lines)} sentences, {len(paras)} paragraphs")
        print(f"{'texts':<11} {'concurrency':>11} {'texts/s':>8} {'sentences/s':>12} "
              f"{'p50_ms':>8} {'p99_ms':>8} {'cores':>6}")
        with MtserveProcess(mtserve, "--cache_bytes=0") as server:
            port = server.grpc_port
            runs = [("sentences", 1, 1000), ("sentences", 32, 3000), ("paragraphs", 1, 180),
                    ("paragraphs", 32, 540), ("document", 1, 3)]
            for name, concurrency, requests in runs:
                cpu_before, wall_before = cpu_seconds(server.pid), time.monotonic()
                r = bench(mtclient, port, files[name], concurrency, requests)
                cores = (cpu_seconds(server.pid) - cpu_before) / (time.monotonic() - wall_before)
                print(f"{name:<11} {concurrency:>11} {float(r['texts_per_s']):>8.1f} "
                      f"{float(r['sentences_per_s']):>12.1f} {float(r['latency_p50_ms']):>8.0f} "
                      f"{float(r['latency_p99_ms']):>8.0f} {cores:>6.2f}")


if __name__ == "__main__":
    main()
