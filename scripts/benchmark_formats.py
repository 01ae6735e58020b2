#!/usr/bin/env python3
"""The document formats end to end against plain text (docs/benchmarks.md#document-formats): a
book-length Markdown file, a two-hour film's SubRip file and the same book as an EPUB, made by
tools/make_format_inputs.py from the 1,000 Multi30k test sentences, against the same sentences
as plain text, one a line; and a Word report of about a hundred pages (those sentences three
times over, with tables and images) against its sentences as plain text.

  mttranslate  build/bin/mttranslate --beam_size=4 --threads=2 --benchmark --format=F < FILE
               under /usr/bin/time -v: its translation time (model load excluded), the whole
               process's wall time and peak RSS
  server       one mtserve (--cache_bytes=0), each text file sent whole as one text to POST
               /v1/translate, beam 4, format TEXT_FORMAT_MARKDOWN, _SRT or _PLAIN (plain.txt is
               then one text of 1,000 lines), each office file to POST /v1/translate_file and its
               job followed until done: the wall time to the answer or the job's end

The machine is shared, so each format's run and a plain text run beside it alternate, ROUNDS
rounds (default 2), and each format is compared with the best of the plain runs beside its own.
Sentences are counted as mttranslate counts them in each file (an EPUB's navigation repeats its
headings: they count). Prints sentences/s and each format's share of plain text's.
Run after scripts/build.sh, with a Python that has python3-docx (Debian's /usr/bin/python3).

Usage: scripts/benchmark_formats.py [BUILD_DIR] [ROUNDS]
"""
import json
import os
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

# (name, file, format, the plain text of the same sentences).
RUNS = [("markdown", "book.md", "markdown", "plain.txt"), ("srt", "film.srt", "srt", "plain.txt"),
        ("epub", "book.epub", "epub", "plain.txt"), ("docx", "report.docx", "docx", "report.txt")]
API_FORMATS = {"text": "TEXT_FORMAT_PLAIN", "markdown": "TEXT_FORMAT_MARKDOWN",
               "srt": "TEXT_FORMAT_SRT"}


def mttranslate(binary, path, fmt):
    """(translation seconds, sentences, process wall seconds, peak RSS MiB) of one run."""
    with open(path, "rb") as stdin:
        done = subprocess.run(
            ["/usr/bin/time", "-v", binary, "--beam_size=4", "--threads=2", "--benchmark",
             f"--format={fmt}"], stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, check=True).stderr
    seconds = float(re.search(r"target tokens in ([\d.]+) s", done).group(1))
    sentences = int(re.search(r"(\d+) sentences,", done).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", done).group(1)
    wall_seconds = sum(float(part) * 60 ** i for i, part in enumerate(reversed(wall.split(":"))))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done).group(1)) / 1024
    return seconds, sentences, wall_seconds, rss


def served_file(port, path):
    """Seconds from sending the file to POST /v1/translate_file to its job's end."""
    boundary = "mtserve-benchmark-boundary"
    with open(path, "rb") as f:
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                f"filename=\"{os.path.basename(path)}\"\r\n\r\n").encode() + f.read() + (
                    f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"options\"\r\n\r\n"
                    f"{{\"beam_size\": 4}}\r\n--{boundary}--\r\n").encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/translate_file", data=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=60) as response:
        job = json.load(response)
    while job["state"] not in ("FILE_JOB_STATE_DONE", "FILE_JOB_STATE_FAILED",
                               "FILE_JOB_STATE_CANCELLED"):
        time.sleep(0.05)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/jobs/{job['id']}") as response:
            job = json.load(response)
    seconds = time.monotonic() - start
    if job["state"] != "FILE_JOB_STATE_DONE":
        raise RuntimeError(f"{path}: {job}")
    return seconds


def served(port, path, fmt):
    if fmt not in API_FORMATS:
        return served_file(port, path)
    with open(path) as f:
        body = json.dumps({"texts": [f.read()],
                           "options": {"beam_size": 4, "format": API_FORMATS[fmt]}})
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/translate", data=body.encode(),
                                     headers={"Content-Type": "application/json"})
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=1200) as response:
        answer = json.load(response)
    seconds = time.monotonic() - start
    if not answer["translations"][0]["hypotheses"][0]["text"]:
        raise RuntimeError(f"{path}: no translation: {answer}")
    return seconds


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    binary = os.path.join(build, "bin", "mttranslate")
    with tempfile.TemporaryDirectory(prefix="mtserve_formats_") as tmp:
        made = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "make_format_inputs.py"),
                               tmp], check=True, capture_output=True, text=True).stdout.strip()
        print(f"# {time.strftime('%Y-%m-%d')}, {cpu_model()}, {os.cpu_count()} cores; {made}")
        print(f"# best of {rounds} rounds, each format's run beside plain text's")
        best = {}  # (where, name, run) -> (seconds, wall, rss)
        sentences = {}  # file -> sentences, as mttranslate counts them
        for r in range(rounds):
            for name, file, fmt, plain in RUNS:
                for run_name, run_file, run_fmt in [("plain", plain, "text"), (name, file, fmt)]:
                    seconds, count, wall, rss = mttranslate(binary, os.path.join(tmp, run_file),
                                                            run_fmt)
                    sentences[run_file] = count
                    print(f"round {r + 1} mttranslate {run_name} ({run_file}): {seconds:.2f} s, "
                          f"{count} sentences (process {wall:.2f} s, {rss:.0f} MiB)", flush=True)
                    key = ("mttranslate", name, run_name)
                    best[key] = min(best.get(key, (seconds, wall, rss)), (seconds, wall, rss))
        with MtserveProcess(os.path.join(build, "bin", "mtserve"), "--cache_bytes=0") as server:
            served(server.http_port, os.path.join(tmp, "plain.txt"), "text")  # Warm up.
            for r in range(rounds):
                for name, file, fmt, plain in RUNS:
                    for run_name, run_file, run_fmt in [("plain", plain, "text"), (name, file, fmt)]:
                        got = served(server.http_port, os.path.join(tmp, run_file), run_fmt)
                        print(f"round {r + 1} server {run_name} ({run_file}): {got:.2f} s",
                              flush=True)
                        key = ("server", name, run_name)
                        best[key] = min(best.get(key, (got,)), (got,))
            with open(f"/proc/{server.pid}/status") as f:
                server_rss = int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1)) / 1024
        print(f"{'where':<12} {'input':<9} {'sentences':>9} {'seconds':>8} {'sentences/s':>12} "
              f"{'of plain':>9} {'process_s':>10} {'peak_MiB':>9}")
        for where in ("mttranslate", "server"):
            for name, file, _, plain_file in RUNS:
                # Against the plain runs beside its own.
                plain = sentences[plain_file] / best[(where, name, "plain")][0]
                for run_name, run_file in (("plain", plain_file), (name, file)):
                    got = best[(where, name, run_name)]
                    rate = sentences[run_file] / got[0]
                    extra = f"{got[1]:>10.2f} {got[2]:>9.0f}" if where == "mttranslate" else ""
                    print(f"{where:<12} {run_name:<9} {sentences[run_file]:>9} {got[0]:>8.2f} "
                          f"{rate:>12.1f} {100 * rate / plain:>8.0f}% {extra}")
        print(f"server peak RSS over all its runs: {server_rss:.0f} MiB")


if __name__ == "__main__":
    main()
