#!/usr/bin/env python3
"""SIGTERM while mtserve loads its models stops it at once, saying why, with a non-zero status.

Before, the signal was blocked until every model had loaded, so only SIGKILL could stop a long or
stuck load. The server here loads six copies of an OPUS-MT-base-shaped random checkpoint (about
a second each), and gets SIGTERM as soon as its --ready_file says "loading" (its ports are open),
that is before it has loaded the first: it must exit before loading them all.

Usage: signal_during_load_test.py BIN_DIR [-- UNITTEST_ARGS]
"""
import os
import signal
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary  # noqa: E402

REPO = os.path.abspath(os.path.join(HERE, "../../.."))
MODELS = 6


class SignalDuringLoadTest(e2e_suite.MtserveTestCase):
    def test_sigterm_while_loading_stops_the_load(self):
        model = os.path.join(self.temp_dir(), "opus-base-random")
        subprocess.run([binary("make_random_checkpoint"),
                        f"--tokenizer_dir={REPO}/tests/data/opus-mt/en-mg", f"--out={model}",
                        "--seed=1"], check=True, capture_output=True, timeout=300)
        specs = ",".join(f"m{i}={model}" for i in range(MODELS))
        server = self.start_mtserve("--metrics_listen=", "--http_listen=", f"--model={specs}",
                                    wait_serving=False)
        server.wait_ready("loading")
        server.process.send_signal(signal.SIGTERM)
        try:
            status = server.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.process.kill()
            self.fail(f"mtserve did not exit on SIGTERM during load:\n{server.stderr()}")
        text = server.stderr()
        detail = f"exit status {status}; stderr:\n{text}"
        self.assertNotEqual(status, 0, "exits non-zero; " + detail)
        self.assertIn("while loading models; exiting", text, "says why; " + detail)
        loaded = text.count(" loaded from ")
        self.assertLess(loaded, MODELS,
                        f"stops loading: {loaded} models loaded, want fewer than {MODELS}; " +
                        detail)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir")
