#!/usr/bin/env python3
"""Under steady load, mtserve's memory stops growing once it has warmed up.

64 clients keep one request each in flight (beam 4) for a few minutes, with texts of one to eight
Multi30k sentences, so that decodes meet many lengths and batch sizes as a real server does. The
server's resident memory is sampled every second. After the warm-up, memory must level off: the
median of the last quarter of the samples may exceed the median of the first quarter of the
measured window by at most TOLERANCE_MIB. Memory that grows with every new shape or every decode
(what a cache without bound, or buffers kept at their peak, do) fails it; the tolerance covers
the allocator's noise, which the README's soak figures put at about +-6 MiB between samples.

Usage: soak_test.py BIN_DIR MULTI30K_TEXT [SECONDS] [-- UNITTEST_ARGS]
"""
import os
import re
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary  # noqa: E402

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


class SoakTest(e2e_suite.MtserveTestCase):
    """The load runs once, in setUpClass, with memory sampled every second; each test reads the
    samples or the load's report."""

    # No cache: the texts repeat, and a cache would answer them undecoded.
    server_flags = ("--cache_bytes=0",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        seconds = e2e_suite.ARGS.seconds
        texts = os.path.join(cls.class_temp_dir(), "texts.txt")
        write_texts(e2e_suite.ARGS.multi30k_text, texts)
        samples = []
        with subprocess.Popen(
                [binary("mtclient"), "bench", f"--server=127.0.0.1:{cls.server.grpc_port}",
                 f"--input={texts}", "--beam_size=4", f"--concurrency={CLIENTS}",
                 f"--duration={seconds}", "--timeout=60"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as client:
            start = time.monotonic()
            while client.poll() is None:
                samples.append((time.monotonic() - start, rss_mib(cls.server.pid)))
                time.sleep(1)
            cls.client_status = client.returncode
            cls.report = client.stdout.read()
        cls.failed_requests = re.search(r"failed_requests:\s+(\d+)", cls.report)
        measured = [rss for t, rss in samples if t >= WARMUP_FRACTION * seconds]
        quarter = max(1, len(measured) // 4)
        cls.early = statistics.median(measured[:quarter])
        cls.late = statistics.median(measured[-quarter:])
        cls.memory = (
            f"RSS MiB every 10 s: {' '.join(f'{rss:.0f}' for _, rss in samples[::10])}\n"
            f"after warm-up ({WARMUP_FRACTION * seconds:.0f} s): first quarter median "
            f"{cls.early:.1f} MiB, last quarter median {cls.late:.1f} MiB, growth "
            f"{cls.late - cls.early:+.1f} MiB (tolerance {TOLERANCE_MIB} MiB)")
        print(cls.memory, cls.report, sep="\n", end="", flush=True)

    def test_the_load_ran(self):
        self.assertEqual(self.client_status, 0, f"mtclient bench failed:\n{self.report}")
        self.assertIsNotNone(self.failed_requests,
                             f"mtclient bench reported no failed_requests:\n{self.report}")

    def test_no_request_failed(self):
        self.assertIsNotNone(self.failed_requests,
                             f"mtclient bench reported no failed_requests:\n{self.report}")
        self.assertEqual(self.failed_requests.group(1), "0", self.report)

    def test_memory_levels_off_after_warm_up(self):
        self.assertLessEqual(self.late - self.early, TOLERANCE_MIB, self.memory)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "multi30k_text",
                   ("seconds", {"nargs": "?", "type": int, "default": 150}))
