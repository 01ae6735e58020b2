#!/usr/bin/env python3
"""A burst of SIGHUPs (a script sending them in a loop) is a few reloads and log lines, each
summary saying how many signals it stands for, and the last signal still gets its reload.

Before, every SIGHUP re-read the files and wrote its lines: 2,000 lines in 5 s. Each signal here
is sent only once mtserve has taken the previous one (its pending-signal mask in /proc shows it),
so that the kernel merges none of them and every one must be counted in a summary.

Usage: sighup_burst_test.py BIN_DIR [-- UNITTEST_ARGS]
"""
import hashlib
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402
from mtserve_process import wait_until  # noqa: E402

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


class SighupBurstTest(e2e_suite.MtserveTestCase):
    """One server gets the burst in setUpClass; each test reads what it did."""

    @classmethod
    def setUpClass(cls):
        keys_path = os.path.join(cls.class_temp_dir(), "keys.txt")
        write_keys(keys_path, key_line("alice"))
        # No polling during the test: every reload is a SIGHUP's.
        cls.server_flags = ("--workers=1", f"--api_keys_file={keys_path}",
                            "--reload_interval=1h")
        super().setUpClass()
        cls.lines_before = len(cls.server.stderr().splitlines())
        for _ in range(SIGNALS - 1):
            send_taken(cls.server.pid)
        # A key added before the last signal: the burst's last reload must read it.
        write_keys(keys_path, key_line("alice") + key_line("dave"))
        send_taken(cls.server.pid)
        # The burst's log is complete once the summaries count every signal.
        cls.all_counted = wait_until(lambda: cls.counted() == SIGNALS)

    @classmethod
    def counted(cls):
        return sum(int(n) for n in SUMMARY.findall(cls.server.stderr()))

    def assert_all_counted(self):
        self.assertTrue(self.all_counted,
                        f"the summaries count {self.counted()} signals, want all {SIGNALS}:\n"
                        f"{self.server.stderr()[-3000:]}")

    def burst_lines(self):
        return self.server.stderr().splitlines()[self.lines_before:]

    def test_summaries_count_every_signal(self):
        self.assert_all_counted()

    def test_key_written_before_the_last_sighup_works(self):
        def dave_works():
            status, _, _ = call(self.server.http_port, "GET", "/v1/models",
                                headers={"Authorization": f"Bearer {KEYS['dave']}"})
            return status == 200
        self.assertTrue(wait_until(dave_works), "GET /v1/models with dave's key is refused")

    def test_far_fewer_log_lines_than_signals(self):
        self.assert_all_counted()  # The log read below is the whole burst's.
        lines = self.burst_lines()
        self.assertLess(len(lines) * 10, SIGNALS,
                        f"{len(lines)} log lines for {SIGNALS} signals:\n" + "\n".join(lines[:20]))

    def test_summaries_stand_for_several_signals_each(self):
        self.assert_all_counted()  # The log read below is the whole burst's.
        summaries = SUMMARY.findall(self.server.stderr())
        self.assertTrue(0 < len(summaries) < SIGNALS,
                        f"{len(summaries)} summaries for {SIGNALS} signals: {summaries}")

    def test_each_reload_is_logged_with_its_outcome(self):
        self.assert_all_counted()  # The log read below is the whole burst's.
        self.assertRegex(self.server.stderr(), r"API keys .* reloaded from",
                         "\n".join(self.burst_lines()[:20]))


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir")
