#!/usr/bin/env python3
"""The wait one sentence sees behind the worst request an unauthenticated client may send, as
docs/design.md states it and docs/benchmarks.md reports it.

One mtserve with its defaults (cache off, so that each probe is decoded). A client sends one
hostile request over HTTP and, while it runs, another sends one-sentence requests ("probes"),
one after the other, each timed. Two hostile requests, each given a deadline so that the run
ends:

  issue   one text of 256 KiB without a space (random letters and digits), default options:
          what the hostile test that found the first-in-first-out queue sent
  worst   --max_message_bytes of texts of --max_text_bytes without a space, beam_size
          --max_beam_size, min_length = max_length = the model's limit: every piece at the
          token limit, every beam of it decoded to the last position

Prints, for an idle server and for each hostile request: probes answered, their latency's
median and maximum, and the hostile request's own outcome. The probes use the default options
(greedy): they share no decode with the hostile request's beams, and wait for a worker to finish
its running decode (docs/design.md, "The worst wait").

Usage: scripts/benchmark_worst_wait.py [BUILD_DIR] [--seconds=S]   (S: each hostile request's
deadline, default 60)
"""
import json
import os
import random
import string
import sys
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from machine import cpu_model  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

PROBE = "A man is riding a bike."


def post(port, body, timeout_s=None):
    """POSTs `body` to /v1/translate; (HTTP status, decoded JSON or text, seconds taken)."""
    headers = {"Content-Type": "application/json"}
    if timeout_s is not None:
        headers["X-Request-Timeout"] = f"{timeout_s}s"
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/translate",
                                     data=json.dumps(body).encode(), headers=headers)
    start = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=3600) as response:
            status, payload = response.status, response.read()
    except urllib.error.HTTPError as e:
        status, payload = e.code, e.read()
    elapsed = time.monotonic() - start
    try:
        return status, json.loads(payload), elapsed
    except ValueError:
        return status, payload.decode(errors="replace"), elapsed


def no_spaces(size, seed):
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits
    return "".join(rng.choice(alphabet) for _ in range(size))


def probe_while(port, running):
    """Probes one after the other while `running` is set; their latencies in seconds."""
    latencies = []
    while running.is_set():
        status, _, elapsed = post(port, {"texts": [PROBE]})
        if status == 200:
            latencies.append(elapsed)
    return latencies


def report(name, latencies, outcome):
    latencies = sorted(latencies)
    if not latencies:
        print(f"{name:<6} {0:>7} {'-':>9} {'-':>9}  {outcome}")
        return
    median = latencies[len(latencies) // 2]
    print(f"{name:<6} {len(latencies):>7} {median * 1000:>9.0f} {latencies[-1] * 1000:>9.0f}  "
          f"{outcome}")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    seconds = 60.0
    for a in sys.argv[1:]:
        if a.startswith("--seconds="):
            seconds = float(a.split("=", 1)[1])
    build = args[0] if args else os.path.join(ROOT, "build")
    mtserve = os.path.join(build, "bin", "mtserve")
    cpu = cpu_model()
    print(f"# {time.strftime('%Y-%m-%d')}, {cpu}, {os.cpu_count()} cores; "
          f"hostile requests' deadline {seconds:.0f} s")
    with MtserveProcess(mtserve, "--cache_bytes=0") as server:
        port = server.http_port
        # The limits an unauthenticated client meets (mtserve's defaults, as ListModels and
        # the flags give them).
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models") as response:
            models = json.loads(response.read())
        limits, model = models["limits"], models["models"][0]
        max_text_bytes = int(limits["max_text_bytes"])
        max_message_bytes = 4 << 20  # mtserve's default --max_message_bytes.
        texts = max(1, min(int(limits["max_texts_per_request"]),
                           (max_message_bytes - 4096) // max_text_bytes))
        longest = int(model["max_output_tokens"])
        hostile = {
            "issue": {"texts": [no_spaces(256 << 10, 1)]},
            "worst": {"texts": [no_spaces(max_text_bytes - 64, 2 + i) for i in range(texts)],
                      "options": {"beam_size": int(limits["max_beam_size"]),
                                  "min_length": longest, "max_length": longest}},
        }
        print(f"{'server':<6} {'probes':>7} {'p50_ms':>9} {'max_ms':>9}  hostile request")
        running = threading.Event()
        running.set()
        idle = []
        for _ in range(50):
            idle.append(post(port, {"texts": [PROBE]})[2])
        report("idle", idle, "none")
        for name, body in hostile.items():
            outcome = {}

            def send(body=body, outcome=outcome):
                status, payload, elapsed = post(port, body, timeout_s=seconds)
                outcome["text"] = (f"HTTP {status} after {elapsed:.1f} s" +
                                   ("" if status == 200 else
                                    f": {str(payload.get('message', payload) if isinstance(payload, dict) else payload)[:80]}"))
                running.clear()

            running.set()
            thread = threading.Thread(target=send)
            thread.start()
            time.sleep(1.0)  # Let it be taken apart and start decoding.
            latencies = probe_while(port, running)
            thread.join()
            report(name, latencies, outcome.get("text", "?"))
            time.sleep(2.0)  # Its last decode leaves within a step of the deadline.


if __name__ == "__main__":
    main()
