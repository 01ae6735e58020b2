#!/usr/bin/env python3
"""A well-behaved HTTP client's latency alone and beside hostile sockets, as docs/benchmarks.md
reports it. Starts one mtserve (its defaults: --http_timeout=10s), then:

  alone    REQUESTS translations of one Multi30k sentence each, one at a time, each on a new
           connection (POST /v1/translate)
  hostile  the same while HOSTILE sockets stay open beside it, in five equal kinds: silent after
           connecting, a head sent a byte at a time, a body sent a byte at a time, idle keep-alive
           after one answer, pipelined requests whose answers are never read. A driver thread
           trickles a byte into each trickling socket every 100 ms and opens a new socket of the
           same kind for each one the server closes, so that HOSTILE stay open throughout.

Prints p50, p90, p99 and the worst latency, failed requests, and how many hostile sockets the
server closed meanwhile. The file-descriptor limit is raised to its hard limit (as `ulimit -n`
would) for this script and the server. Run after scripts/build.sh; client, driver and server
share the machine.

Usage: scripts/benchmark_http_hostile.py [--build_dir=build] [--mtserve=PATH] [--requests=300]
                                         [--hostile=1000] [--timeout=60]
"""
import argparse
import http.client
import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from machine import cpu_model  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

KINDS = ("silent", "trickled head", "trickled body", "idle keep-alive", "unread")


class HostileSockets:
    """`count` hostile sockets against `port`, kept open: each one the server closes is replaced
    by a new one of the same kind."""

    def __init__(self, port, count):
        self.port = port
        self.count = count
        self.sockets = []  # [kind, socket, bytes still to trickle]
        self.replaced = {kind: 0 for kind in KINDS}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, kind):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if kind == "unread":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(10)
        sock.connect(("127.0.0.1", self.port))
        trickle = b""
        if kind == "trickled head":
            trickle = b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"x" * 100000
        elif kind == "trickled body":
            sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\n"
                         b"Content-Length: 100000\r\n\r\n")
            trickle = b" " * 100000
        elif kind == "idle keep-alive":
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            sock.recv(4096)
        elif kind == "unread":
            sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 200)
        sock.setblocking(False)
        return [kind, sock, trickle]

    def open_all(self):
        for i in range(self.count):
            self.sockets.append(self._open(KINDS[i % len(KINDS)]))
        self.thread.start()

    def _closed(self, entry):
        kind, sock, _ = entry
        try:
            if kind == "unread":
                info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
                return info[0] != 1  # Not ESTABLISHED: the server closed or reset it.
            return sock.recv(65536) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _run(self):
        while not self.stop.is_set():
            for i, entry in enumerate(self.sockets):
                if self.stop.is_set():
                    return
                if self._closed(entry):
                    entry[1].close()
                    self.replaced[entry[0]] += 1
                    try:
                        self.sockets[i] = self._open(entry[0])
                    except OSError:
                        pass
                    continue
                if entry[2]:
                    try:
                        entry[1].send(entry[2][:1])
                        entry[2] = entry[2][1:]
                    except OSError:
                        pass
            time.sleep(0.1)

    def close(self):
        self.stop.set()
        self.thread.join(30)
        for _, sock, _ in self.sockets:
            sock.close()


def measure(port, sentences, requests, timeout):
    """Latencies (ms) of `requests` translations one after the other, and the failures."""
    latencies, failures = [], 0
    for i in range(requests):
        body = json.dumps({"texts": [sentences[i % len(sentences)]]})
        start = time.monotonic()
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            connection.request("POST", "/v1/translate", body=body,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            connection.close()
            if response.status != 200:
                failures += 1
                continue
        except OSError:
            failures += 1
            continue
        latencies.append((time.monotonic() - start) * 1000)
    return latencies, failures


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def report(name, latencies, failures):
    print(f"{name:8} ok {len(latencies):4}  failed {failures:3}"
          f"  p50 {percentile(latencies, 50):8.1f} ms  p90 {percentile(latencies, 90):8.1f} ms"
          f"  p99 {percentile(latencies, 99):8.1f} ms"
          f"  max {max(latencies, default=float('nan')):8.1f} ms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build_dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--mtserve", default="")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--hostile", type=int, default=1000)
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # Inherited by mtserve.
    if hard < args.hostile + 256:
        sys.exit(f"the descriptor limit ({hard}) is too low for {args.hostile} hostile sockets")
    mtserve = args.mtserve or os.path.join(args.build_dir, "bin", "mtserve")
    with open(os.path.join(ROOT, "tests", "data", "multi30k", "test_2016_flickr.en")) as f:
        sentences = [line.strip() for line in f if line.strip()]
    print(f"{' '.join(sys.argv)}")
    print(f"CPU: {cpu_model()} ({os.cpu_count()} CPUs); {time.strftime('%Y-%m-%d')}; "
          f"descriptor limit {hard}")
    print(f"mtserve: {mtserve} (its defaults); {args.requests} requests one at a time, each on a "
          f"new connection, one sentence each")
    with MtserveProcess(mtserve, "--cache_bytes=0") as server:
        port = server.http_port
        measure(port, sentences, 20, args.timeout)  # Warm-up.
        report("alone", *measure(port, sentences, args.requests, args.timeout))
        hostile = HostileSockets(port, args.hostile)
        hostile.open_all()
        try:
            report("hostile", *measure(port, sentences, args.requests, args.timeout))
        finally:
            hostile.close()
        print(f"hostile sockets: {args.hostile} kept open ({args.hostile // len(KINDS)} of each "
              f"kind); closed by the server meanwhile: "
              + ", ".join(f"{kind} {n}" for kind, n in hostile.replaced.items()))


if __name__ == "__main__":
    main()
