"""Runs an mtserve of its own for Python scripts and tests: loopback ports the kernel chooses,
stderr in a file, and the ports and state read from its --ready_file."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# The states of a ready file, in the order mtserve goes through them.
STATES = ("loading", "serving", "draining")


class MtserveProcess:
    """mtserve on loopback ports the kernel chooses (gRPC, HTTP, metrics; `flags` may override
    them, e.g. --metrics_listen= turns metrics off), with a --ready_file in a directory of its
    own. Waits until it serves unless `wait_serving` is False; as a context manager, stops it
    (SIGTERM) on exit. Raises RuntimeError with its stderr if it exits first or does not serve
    in time."""

    def __init__(self, binary, *flags, wait_serving=True):
        self.log = tempfile.NamedTemporaryFile("w+", prefix="mtserve_", suffix=".log")
        self.dir = tempfile.TemporaryDirectory(prefix="mtserve_")
        self.ready_file = os.path.join(self.dir.name, "ready.json")
        self.process = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
             "--http_listen=127.0.0.1:0", f"--ready_file={self.ready_file}", *flags],
            stderr=self.log)
        self.pid = self.process.pid
        self.grpc_port = self.http_port = self.metrics_port = None
        if wait_serving:
            self.wait_ready("serving", timeout=300)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stderr(self):
        """What mtserve printed so far."""
        self.log.seek(0)
        return self.log.read()

    def ready(self):
        """The ready file as mtserve last wrote it (a dict), or None before it writes it; the
        ports in it are read (None: that listener is off)."""
        try:
            with open(self.ready_file) as f:
                ready = json.load(f)
        except FileNotFoundError:
            return None
        self.grpc_port, self.http_port, self.metrics_port = (
            ready["grpc"], ready["http"], ready["metrics"])
        return ready

    def wait_ready(self, state="serving", timeout=120):
        """The ready file once it says `state` or a later one (loading, serving, draining); its
        ports are read."""
        deadline = time.monotonic() + timeout
        while True:
            ready = self.ready()
            if ready is not None and STATES.index(ready["state"]) >= STATES.index(state):
                return ready
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mtserve's ready file did not say {state!r} (it holds "
                                   f"{ready}):\n{self.stderr()}")
            time.sleep(0.05)

    def wait_for(self, pattern, timeout=120):
        """The match of `pattern` (a regular expression) in stderr, once it is printed; the ports
        in the ready file by then are read."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.stderr()
            match = re.search(pattern, text, re.MULTILINE)
            if match:
                self.ready()
                return match
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"mtserve did not print {pattern!r}:\n{text}")
            time.sleep(0.05)

    def metrics(self):
        """A scrape of /metrics."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.metrics_port}/metrics",
                                    timeout=60) as response:
            return response.read().decode()

    def terminate_during(self, request):
        """Runs `request()` on a thread and sends SIGTERM once mtserve counts it in flight (its
        metrics must be on); returns the thread once its ready file says it drains. Join it: its
        `result` is what `request()` returned."""
        thread = threading.Thread(target=lambda: setattr(thread, "result", request()),
                                  daemon=True)
        thread.result = None
        thread.start()
        deadline = time.monotonic() + 60
        while not re.search(r"^mtserve_in_flight_requests\{[^}]*\} 1", self.metrics(),
                            re.MULTILINE):
            if time.monotonic() > deadline or not thread.is_alive():
                break
            time.sleep(0.01)
        self.process.send_signal(signal.SIGTERM)
        self.wait_ready("draining")
        return thread

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        elif self.process.returncode != 0:
            # It ended by itself (a test may have meant it to): its log, for a test that failed
            # because it did (the output of a test that passes is not shown).
            print(f"mtserve (pid {self.pid}) had exited with status {self.process.returncode} "
                  f"before it was stopped; it printed:\n{self.stderr()}", file=sys.stderr)
        self.process.wait(timeout=120)
        self.log.close()
        self.dir.cleanup()


def wait_until(predicate, seconds=60):
    """Polls `predicate` until it is true (True) or `seconds` pass (False): for what a server does
    in its own time, such as re-reading a file; the bound only keeps a test from hanging."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def cpu_seconds(pid):
    """User + system CPU seconds the process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
