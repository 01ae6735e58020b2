"""Runs an mtserve of its own for Python scripts and tests: loopback ports the kernel chooses,
stderr in a file, and the gRPC port once the server serves."""
import contextlib
import os
import re
import subprocess
import tempfile
import time


@contextlib.contextmanager
def running_mtserve(binary, *flags):
    """Yields (process, grpc_port) once mtserve serves; stops it (SIGTERM) on exit. The HTTP API
    listens on a port of its own too: process.http_port (and with --metrics_listen=HOST:0 among
    `flags`, the metrics: process.metrics_port); process.stderr_text() is what mtserve printed so
    far. Raises RuntimeError with its stderr if it exits first."""
    with tempfile.NamedTemporaryFile("w+", prefix="mtserve_", suffix=".log") as log:
        server = subprocess.Popen([binary, "--listen=127.0.0.1:0", "--metrics_listen=",
                                   "--http_listen=127.0.0.1:0", *flags], stderr=log)
        def stderr_text():
            log.seek(0)
            return log.read()

        server.stderr_text = stderr_text
        try:
            port = None
            while port is None:
                if server.poll() is not None:
                    log.seek(0)
                    raise RuntimeError(f"mtserve exited before serving:\n{log.read()}")
                log.seek(0)
                text = log.read()
                match = re.search(r"listening on \S+ \(port (\d+)\)", text)
                if match and "mtserve: serving" in text:
                    port = match.group(1)
                    http = re.search(r"mtserve: HTTP on \S+ \(port (\d+)\)", text)
                    server.http_port = int(http.group(1)) if http else None
                    metrics = re.search(r"metrics on \S+ \(port (\d+)\)", text)
                    server.metrics_port = int(metrics.group(1)) if metrics else None
                else:
                    time.sleep(0.1)
            yield server, port
        finally:
            server.terminate()
            server.wait(timeout=60)


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
