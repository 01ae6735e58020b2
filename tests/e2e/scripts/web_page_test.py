#!/usr/bin/env python3
"""mtserve's translation page (GET /) in a real browser: Debian's headless Chromium driven by the
npm package playwright-core (tests/web, pinned by its package-lock.json; `npm ci` installs it into
NPM_DIR unless that version is there already). tests/web/page_test.js types, translates, reads the
page and compares it with the JSON API's answers, triggers errors, and saves screenshots into
SCREENSHOT_DIR (their paths are printed); it ends by sending mtserve SIGTERM, after which mtserve
must drain and exit 0. A second mtserve, started with --api_keys_file, checks that the page asks
for a key and sends it.

Usage: web_page_test.py BIN_DIR WEB_TEST_DIR NPM_DIR SCREENSHOT_DIR
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from mtserve_process import MtserveProcess  # noqa: E402
from npm_packages import npm_ci  # noqa: E402

CHROMIUM = "/usr/bin/chromium"  # Debian's package `chromium` (scripts/install-deps.sh).
KEY = "page-test-key-0123456789"


def main():
    bin_dir, web_test_dir, npm_dir, screenshot_dir = sys.argv[1:5]
    if not os.path.exists(CHROMIUM):
        sys.exit(f"FAIL {CHROMIUM} is missing: scripts/install-deps.sh installs Debian's chromium")
    node_modules = npm_ci(web_test_dir, npm_dir)
    shutil.rmtree(screenshot_dir, ignore_errors=True)
    os.makedirs(screenshot_dir)
    # A small text limit, for the over-the-limit error; a long grace, for the draining check.
    keys_file = tempfile.NamedTemporaryFile("w", prefix="mtserve_keys_", suffix=".txt")
    keys_file.write(f"page sha256:{hashlib.sha256(KEY.encode()).hexdigest()}\n")
    keys_file.flush()
    mtserve = os.path.join(bin_dir, "mtserve")
    keyed = MtserveProcess(mtserve, "--workers=1", f"--api_keys_file={keys_file.name}")
    server = MtserveProcess(mtserve, "--workers=1", "--max_text_bytes=1000", "--http_timeout=60s",
                            "--shutdown_grace=60s")
    try:
        config = {"url": f"http://127.0.0.1:{server.http_port}",
                  "chromium": CHROMIUM, "screenshots": screenshot_dir, "pid": server.process.pid,
                  "keys_url": f"http://127.0.0.1:{keyed.http_port}", "key": KEY}
        node = subprocess.run(["node", os.path.join(web_test_dir, "page_test.js"),
                               json.dumps(config)],
                              env={**os.environ, "NODE_PATH": node_modules},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300)
        print(node.stdout, end="")
        exit_code = server.process.wait(timeout=120)
        if exit_code != 0:
            print(f"FAIL mtserve exited {exit_code} after draining:\n{server.stderr()}")
        ok = node.returncode == 0 and exit_code == 0
    finally:
        server.stop()
        keyed.stop()
        keys_file.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
