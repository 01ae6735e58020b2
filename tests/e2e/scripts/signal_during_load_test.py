#!/usr/bin/env python3
"""SIGTERM while mtserve loads its models stops it at once, saying why, with a non-zero status.

Before, the signal was blocked until every model had loaded, so only SIGKILL could stop a long or
stuck load. The server here loads six copies of an OPUS-MT-base-shaped random checkpoint (about
a second each), and gets SIGTERM as soon as its --ready_file says "loading" (its ports are open),
that is before it has loaded the first: it must exit before loading them all.

Usage: signal_during_load_test.py BIN_DIR
"""
import os
import signal
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "scripts/lib"))
from mtserve_process import MtserveProcess  # noqa: E402

MODELS = 6


def main():
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="mtserve_signal_") as tmp:
        model = os.path.join(tmp, "opus-base-random")
        subprocess.run([os.path.join(bin_dir, "make_random_checkpoint"),
                        f"--tokenizer_dir={REPO}/tests/data/opus-mt/en-mg", f"--out={model}",
                        "--seed=1"], check=True, capture_output=True, timeout=300)
        specs = ",".join(f"m{i}={model}" for i in range(MODELS))
        server = MtserveProcess(os.path.join(bin_dir, "mtserve"), "--metrics_listen=",
                                "--http_listen=", f"--model={specs}", wait_serving=False)
        try:
            server.wait_ready("loading")
            server.process.send_signal(signal.SIGTERM)
            status = server.process.wait(timeout=120)
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            server.process.kill()
            print(f"FAIL mtserve did not exit on SIGTERM during load: {error}")
            print("0 passed, 1 failed")
            sys.exit(1)
        finally:
            text = server.stderr()
            server.stop()
    loaded = text.count(" loaded from ")
    checks = [
        ("exits non-zero", status != 0),
        ("says why", "while loading models; exiting" in text),
        ("stops loading (exits before the last model loads)", loaded < MODELS),
    ]
    for name, passed in checks:
        print(("ok   " if passed else "FAIL ") + name)
    failed = sum(not passed for _, passed in checks)
    if failed:
        print(f"exit status {status}; stderr:\n{text}")
    print(f"{len(checks) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
