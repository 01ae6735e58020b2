#!/usr/bin/env python3
"""Under steady load, mtserve's memory stops growing once it has warmed up.

64 clients keep one request each in flight (beam 4) for a few minutes, with texts of one to eight
Multi30k sentences, so that decodes meet many lengths and batch sizes as a real server does. The
server's resident memory is sampled every second. After the warm-up, memory must level off: the
median of the last quarter of the samples may exceed the median of the first quarter of the
measured window by at most TOLERANCE_MIB. Memory that grows with every new shape or every decode
(what a cache without bound, or buffers kept at their peak, do) fails it; the tolerance covers
the allocator's noise, which the README's soak figures put at about +-6 MiB between samples.

Usage: soak_test.py BIN_DIR MULTI30K_TEXT [SECONDS]
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "scripts", "lib"))
from mtserve_process import MtserveProcess  # noqa: E402

CLIENTS = 64
WARMUP_FRACTION = 0.4
TOLERANCE_MIB = 12


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def write_texts(source, out):
    """Texts of 1..8 consecutive sentences, in a fixed order (no randomness: reruns compare)."""
    with open(source, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    texts, i, n = [], 0, 1
    while i < len(lines):
        texts.append(" ".join(lines[i:i + n]))
        i += n
        n = n % 8 + 1
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(texts) + "\n")


def main():
    bin_dir, source = sys.argv[1], sys.argv[2]
    seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    with tempfile.TemporaryDirectory(prefix="mtserve_soak_") as tmp:
        texts = os.path.join(tmp, "texts.txt")
        write_texts(source, texts)
        # No cache: the texts repeat, and a cache would answer them undecoded.
        with MtserveProcess(os.path.join(bin_dir, "mtserve"),
                            "--cache_bytes=0") as server:
            port = server.grpc_port
            client = subprocess.Popen(
                [os.path.join(bin_dir, "mtclient"), "bench", f"--server=127.0.0.1:{port}",
                 f"--input={texts}", "--beam_size=4", f"--concurrency={CLIENTS}",
                 f"--duration={seconds}", "--timeout=60"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            samples = []
            start = time.monotonic()
            while client.poll() is None:
                samples.append((time.monotonic() - start, rss_mib(server.pid)))
                time.sleep(1)
            report = client.stdout.read()

    measured = [rss for t, rss in samples if t >= WARMUP_FRACTION * seconds]
    quarter = max(1, len(measured) // 4)
    early, late = statistics.median(measured[:quarter]), statistics.median(measured[-quarter:])
    failed_requests = re.search(r"failed_requests:\s+(\d+)", report)
    print(f"RSS MiB every 10 s: {' '.join(f'{rss:.0f}' for _, rss in samples[::10])}")
    print(f"after warm-up ({WARMUP_FRACTION * seconds:.0f} s): first quarter median {early:.1f} MiB, "
          f"last quarter median {late:.1f} MiB, growth {late - early:+.1f} MiB "
          f"(tolerance {TOLERANCE_MIB} MiB)")
    checks = [
        ("the load ran", client.returncode == 0 and failed_requests is not None),
        ("no request failed", failed_requests is not None and failed_requests.group(1) == "0"),
        ("memory levels off after warm-up", late - early <= TOLERANCE_MIB),
    ]
    for name, passed in checks:
        print(("ok   " if passed else "FAIL ") + name)
    failed = sum(not passed for _, passed in checks)
    print(report, end="")
    print(f"{len(checks) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
