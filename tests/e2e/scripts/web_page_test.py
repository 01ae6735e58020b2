#!/usr/bin/env python3
"""mtserve's translation page (GET /) in a real browser: Debian's headless Chromium driven by the
npm package playwright-core (tests/web, pinned by its package-lock.json; `npm ci` installs it into
NPM_DIR unless that version is there already). tests/web/page_test.js types, translates, reads the
page and compares it with the JSON API's answers, triggers errors, and saves screenshots into
SCREENSHOT_DIR (their paths are printed); it ends by sending mtserve SIGTERM, after which mtserve
must drain and exit 0. Its File tab's checks upload files (--max_file_bytes=65536), a Word document
made here by python-docx among them. The mtserve it drives serves the three trained models (en-de, the default,
de-en and fr-en) with language detection (LANGID_MODEL), for the language pickers and "Detect
language"; the sentences come from the Multi30k test sets in DATA_DIR. A second mtserve, started
with --api_keys_file, checks that the page asks for a key and sends it.

Usage: web_page_test.py BIN_DIR WEB_TEST_DIR NPM_DIR SCREENSHOT_DIR MODELS_DIR LANGID_MODEL DATA_DIR
       [-- UNITTEST_ARGS]
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from npm_packages import npm_ci  # noqa: E402  (scripts/lib, on the path through e2e_suite)

CHROMIUM = "/usr/bin/chromium"  # Debian's package `chromium` (scripts/install-deps.sh).
KEY = "page-test-key-0123456789"
# A small file limit, for the file over the limit, that a python-docx document (36 KB) is within.
MAX_FILE_BYTES = 65536


def make_docx(path):
    """A Word document of two paragraphs, a word in bold, by python-docx (python3-docx)."""
    import docx
    document = docx.Document()
    document.add_paragraph("A man is riding a bike in the park. Two dogs play in the snow.")
    paragraph = document.add_paragraph("A ")
    paragraph.add_run("young").bold = True
    paragraph.add_run(" girl climbs into a wooden playhouse.")
    document.save(path)


def make_doctype_docx(source, path):
    """`source` (a .docx) with a DOCTYPE in word/document.xml: it is a Word document by its entries,
    so the upload is taken, and its job fails once the part is read (DOCTYPEs are refused)."""
    import zipfile
    with zipfile.ZipFile(source) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "word/document.xml":
                end = data.index(b"?>") + 2
                data = data[:end] + b"<!DOCTYPE w:document>" + data[end:]
            out.writestr(item, data)


class WebPageTest(e2e_suite.MtserveTestCase):
    def test_page_in_chromium(self):
        """page_test.js's checks pass, then mtserve, sent SIGTERM by its last check, exits 0."""
        args = e2e_suite.ARGS
        self.assertTrue(os.path.exists(CHROMIUM),
                        f"{CHROMIUM} is missing: scripts/install-deps.sh installs Debian's "
                        "chromium")
        node_modules = npm_ci(args.web_test_dir, args.npm_dir)
        shutil.rmtree(args.screenshot_dir, ignore_errors=True)
        os.makedirs(args.screenshot_dir)
        keys_file = os.path.join(self.temp_dir(), "keys.txt")
        with open(keys_file, "w") as f:
            f.write(f"page sha256:{hashlib.sha256(KEY.encode()).hexdigest()}\n")
        keyed = self.start_mtserve("--workers=1", f"--api_keys_file={keys_file}")
        # Small text and file limits, for the over-the-limit errors; a long grace, for the
        # draining check.
        models = args.models_dir
        server = self.start_mtserve(
            "--workers=1", "--max_text_bytes=1000", f"--max_file_bytes={MAX_FILE_BYTES}",
            "--http_timeout=60s", "--shutdown_grace=60s",
            f"--model={models}/multi30k-en-de", f"--model={models}/multi30k-de-en",
            f"--model={models}/multi30k-fr-en", f"--language_model={args.langid_model}")
        docx_path = os.path.join(self.temp_dir(), "park.docx")
        make_docx(docx_path)
        doctype_path = os.path.join(self.temp_dir(), "doctype.docx")
        make_doctype_docx(docx_path, doctype_path)
        config = {"url": f"http://127.0.0.1:{server.http_port}", "data": args.data_dir,
                  "docx": docx_path, "doctype_docx": doctype_path,
                  "chromium": CHROMIUM, "screenshots": args.screenshot_dir,
                  "pid": server.process.pid, "max_file_bytes": MAX_FILE_BYTES,
                  "keys_url": f"http://127.0.0.1:{keyed.http_port}", "key": KEY}
        node = subprocess.run(["node", os.path.join(args.web_test_dir, "page_test.js"),
                               json.dumps(config)],
                              env={**os.environ, "NODE_PATH": node_modules},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300)
        print(node.stdout, end="", flush=True)
        self.assertEqual(node.returncode, 0,
                         "page_test.js failed (its FAIL lines are above):\n" + node.stdout[-3000:])
        exit_code = server.process.wait(timeout=120)
        self.assertEqual(exit_code, 0, f"mtserve exited {exit_code} after draining:\n"
                         f"{server.stderr()}")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "web_test_dir", "npm_dir", "screenshot_dir", "models_dir",
                   "langid_model", "data_dir")
