#!/usr/bin/env python3
"""SIGTERM while mtserve loads its models stops it at once, saying why, with a non-zero status.

Before, the signal was blocked until every model had loaded, so only SIGKILL could stop a long or
stuck load. The server here loads six copies of an OPUS-MT-base-shaped random checkpoint (about
a second each), and gets SIGTERM as soon as it listens, that is before it has loaded the first:
it must exit before loading them all.

Usage: signal_during_load_test.py BIN_DIR
"""
import os
import signal
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODELS = 6


def main():
    bin_dir = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="mtserve_signal_") as tmp:
        model = os.path.join(tmp, "opus-base-random")
        subprocess.run([os.path.join(bin_dir, "make_random_checkpoint"),
                        f"--tokenizer_dir={REPO}/tests/data/opus-mt/en-mg", f"--out={model}",
                        "--seed=1"], check=True, capture_output=True, timeout=300)
        specs = ",".join(f"m{i}={model}" for i in range(MODELS))
        server = subprocess.Popen(
            [os.path.join(bin_dir, "mtserve"), "--listen=127.0.0.1:0", "--metrics_listen=", "--http_listen=",
             f"--model={specs}"], stderr=subprocess.PIPE, text=True)
        stderr = []
        for line in server.stderr:
            stderr.append(line)
            if "listening on" in line:
                server.send_signal(signal.SIGTERM)
                break
        try:
            stderr.append(server.stderr.read())
            status = server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
            print("FAIL mtserve did not exit on SIGTERM during load")
            print("0 passed, 1 failed")
            sys.exit(1)
    text = "".join(stderr)
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
