#!/usr/bin/env python3
"""A Markdown document translated through every API and offline, checked with pandoc.

- The same document (front matter, headings, emphasis, strong, strikethrough, code spans, links,
  an image, an autolink, a quote, list and task items, a table, a fenced code block) sent with
  format Markdown to /v1/translate, gRPC's Translate, LibreTranslate's /translate (format
  "markdown") and mttranslate --format=markdown comes back the same from each: offline equals
  served.
- pandoc (Debian's, a parser nobody here wrote) reads the translation as the same document: the
  same blocks in the same order, the same code blocks and code spans, the same link and image
  URLs; and its text is translated (it differs from the source's).
- A paragraph without inline formatting translates to the plain translation of its text.
- A table of more cells than the limit is INVALID_ARGUMENT naming the table and the limit.

Usage: markdown_test.py BIN_DIR STUBS_DIR [-- UNITTEST_ARGS]
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary, post_json  # noqa: E402

PLAIN_PARAGRAPH = "A dog runs on the beach."
DOCUMENT = f"""---
title: Dogs
---

# A dog on the beach

{PLAIN_PARAGRAPH}

Two children play in the **water** near a `boat`. A man in a red shirt reads a
[book](https://example.com/book "The book").

> A woman is sitting on a bench.

- A boy jumps into the pool.
- [ ] Two men sit on a ~~bench~~ wall.

| Animal | Place |
|--------|-------|
| A black dog | In the *park* |

```
code stays here
```

![A brown dog](dog.png) runs through the grass.

See <https://example.com/auto> for more.
"""
OPTIONS = {"format": "TEXT_FORMAT_MARKDOWN"}  # Greedy, as mttranslate and LibreTranslate decode.


def pandoc_json(markdown):
    result = subprocess.run(["pandoc", "-f", "gfm", "-t", "json"], input=markdown,
                            capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout)


def structure(markdown):
    """What must survive translation, from pandoc's syntax tree: the block types in document
    order (nested ones included), the code blocks, and the code spans, link and image URLs
    (sorted: a translation may reorder a paragraph's words)."""
    blocks, code_blocks, code, urls = [], [], [], []

    def walk(node, in_block):
        if isinstance(node, list):
            for child in node:
                walk(child, in_block)
            return
        if not isinstance(node, dict) or "t" not in node:
            return
        kind, content = node["t"], node.get("c")
        if kind in ("Para", "Plain", "Header", "BlockQuote", "BulletList", "OrderedList",
                    "CodeBlock", "RawBlock", "Table", "HorizontalRule", "Div", "LineBlock"):
            blocks.append(kind)
        if kind == "CodeBlock":
            code_blocks.append(content[1])
        elif kind == "Code":
            code.append(content[1])
        elif kind in ("Link", "Image"):
            urls.append(content[2][0])
        walk(content, in_block)

    tree = pandoc_json(markdown)
    walk(tree["blocks"], False)
    return {"blocks": blocks, "code_blocks": code_blocks, "code": sorted(code),
            "urls": sorted(urls), "meta": tree.get("meta")}


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


class MarkdownTest(e2e_suite.MtserveTestCase):
    server_flags = ("--workers=1",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        port = cls.server.http_port
        status, _, body = post_json(port, "/v1/translate",
                                    {"texts": [DOCUMENT, PLAIN_PARAGRAPH], "options": OPTIONS})
        if status != 200:
            raise RuntimeError(f"/v1/translate: {status} {body[:300]!r}")
        translations = json.loads(body)["translations"]
        cls.http = translations[0]["hypotheses"][0]["text"]
        plain = post_json(port, "/v1/translate",
                          {"texts": [PLAIN_PARAGRAPH]})
        cls.plain = json.loads(plain[2])["translations"][0]["hypotheses"][0]["text"]

    def test_http_grpc_libretranslate_and_mttranslate_agree(self):
        channel = grpc.insecure_channel(f"127.0.0.1:{self.server.grpc_port}")
        self.addCleanup(channel.close)
        answer = pb_grpc.TranslatorStub(channel).Translate(
            pb.TranslateRequest(texts=[DOCUMENT.encode()],
                                options=pb.DecodingOptions(format=pb.TEXT_FORMAT_MARKDOWN)),
            timeout=300)
        self.assertEqual(answer.translations[0].hypotheses[0].text, self.http)

        status, _, body = post_json(self.server.http_port, "/translate",
                                    {"q": DOCUMENT, "source": "en", "target": "de",
                                     "format": "markdown"})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["translatedText"], self.http)

        offline = subprocess.run([binary("mttranslate"), "--threads=1", "--format=markdown"],
                                 input=DOCUMENT, capture_output=True, text=True, timeout=600)
        self.assertEqual(offline.returncode, 0, offline.stderr)
        self.assertEqual(offline.stdout, self.http)

    def test_pandoc_reads_the_same_document(self):
        if shutil.which("pandoc") is None:
            self.skipTest("pandoc is not installed (scripts/install-deps.sh installs it)")
        source, translated = structure(DOCUMENT), structure(self.http)
        self.assertEqual(translated, source, self.http)
        self.assertEqual(source["code_blocks"], ["code stays here"])
        self.assertEqual(source["code"], ["boat"])
        self.assertEqual(source["urls"], ["dog.png", "https://example.com/auto",
                                          "https://example.com/book"])
        self.assertIn("Table", source["blocks"])
        self.assertNotEqual(self.http, DOCUMENT)
        # Every translatable block changed: no source sentence is left in the translation.
        for sentence in ("A dog on the beach", "A woman is sitting on a bench",
                         "A boy jumps into the pool", "A black dog"):
            self.assertNotIn(sentence, self.http)

    def test_a_paragraph_without_inline_formatting_is_its_plain_translation(self):
        paragraphs = self.http.split("\n\n")
        source = DOCUMENT.split("\n\n")
        self.assertEqual(len(paragraphs), len(source), self.http)
        self.assertEqual(paragraphs[source.index(PLAIN_PARAGRAPH)], self.plain)

    def test_a_table_over_the_cell_limit_is_invalid_argument(self):
        table = "| a | b |\n|---|---|\n" + "| c | d |\n" * 50000
        status, _, body = post_json(self.server.http_port, "/v1/translate",
                                    {"texts": [table], "options": OPTIONS})
        self.assertEqual(status, 400, body[:300])
        error = json.loads(body)
        self.assertIn("INVALID_ARGUMENT", json.dumps(error))
        self.assertIn("table of more than 100000 cells", error["message"])
        self.assertIn("texts[0]", error["message"])


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
