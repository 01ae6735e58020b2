#!/usr/bin/env python3
"""A burst of SIGHUPs (a script sending them in a loop) is a few reloads and log lines, each
summary saying how many signals it stands for, and the last signal still gets its reload.

Before, every SIGHUP re-read the files and wrote its lines: 2,000 lines in 5 s. Each signal here
is sent only once mtserve has taken the previous one (its pending-signal mask in /proc shows it),
so that the kernel merges none of them and every one must be counted in a summary.

Usage: sighup_burst_test.py BIN_DIR
"""
import hashlib
import os
import re
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import Checks, call  # noqa: E402
from mtserve_process import MtserveProcess, wait_until  # noqa: E402

SIGNALS = 1000
KEYS = {name: f"{name}-{os.urandom(16).hex()}" for name in ("alice", "dave")}
SUMMARY = re.compile(r"^mtserve: reloading on SIGHUP \((\d+) since the last reload\)$",
                     re.MULTILINE)


def key_line(name):
    return f"{name} sha256:{hashlib.sha256(KEYS[name].encode()).hexdigest()}\n"


def write_keys(path, text):
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


def sighup_pending(pid):
    """Whether a SIGHUP sent to the process waits to be taken (ShdPnd: bit 0 is SIGHUP)."""
    with open(f"/proc/{pid}/status") as f:
        pending = re.search(r"^ShdPnd:\s*([0-9a-f]+)$", f.read(), re.MULTILINE).group(1)
    return int(pending, 16) & 1 != 0


def send_taken(pid):
    """Sends SIGHUP and returns once the server has taken it (30 s at most: a hang's bound)."""
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 30
    while sighup_pending(pid):
        if time.monotonic() > deadline:
            raise RuntimeError("mtserve did not take a SIGHUP")


def main():
    checks = Checks()
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="mtserve_sighup_") as tmp:
        keys_path = os.path.join(tmp, "keys.txt")
        write_keys(keys_path, key_line("alice"))
        # No polling during the test: every reload is a SIGHUP's.
        with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1",
                            f"--api_keys_file={keys_path}", "--reload_interval=1h") as server:
            before = len(server.stderr().splitlines())
            for _ in range(SIGNALS - 1):
                send_taken(server.pid)
            # A key added before the last signal: the burst's last reload must read it.
            write_keys(keys_path, key_line("alice") + key_line("dave"))
            send_taken(server.pid)

            def counted():
                return sum(int(n) for n in SUMMARY.findall(server.stderr()))
            checks.expect(f"the summaries count all {SIGNALS} signals",
                          wait_until(lambda: counted() == SIGNALS), f"counted {counted()}")

            def dave_works():
                status, _, _ = call(server.http_port, "GET", "/v1/models",
                                    headers={"Authorization": f"Bearer {KEYS['dave']}"})
                return status == 200
            checks.expect("the key written before the last SIGHUP works", wait_until(dave_works))

            log = server.stderr()
            lines = log.splitlines()[before:]
            summaries = SUMMARY.findall(log)
            checks.expect(f"far fewer log lines than signals ({len(lines)} for {SIGNALS})",
                          len(lines) * 10 < SIGNALS, "\n".join(lines[:20]))
            checks.expect(f"summaries stand for several signals each ({summaries})",
                          0 < len(summaries) < SIGNALS)
            checks.expect("each reload is logged with its outcome",
                          re.search(r"API keys .* reloaded from", log) is not None,
                          "\n".join(lines[:20]))

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
