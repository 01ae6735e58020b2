#!/usr/bin/env python3
"""mtserve's LibreTranslate-compatible API (POST /translate, GET /languages,
GET /frontend/settings) against a real mtserve on ports the kernel chooses.

- The published npm client `libretranslate` (tests/libretranslate, pinned by its package-lock.json)
  translates through it, and its results equal the native /v1/translate answers
  (tests/libretranslate/client_test.js). `npm ci` installs the client into NPM_DIR unless that
  version is there already, so a second run needs no network.
- With the Python standard library: JSON and form-encoded bodies, q as an array, alternatives,
  format html, source auto (and its error when two models translate into the target), every
  error as {"error": "..."} with LibreTranslate's status (429 for a full queue), /languages and
  /frontend/settings.

Usage: libretranslate_test.py BIN_DIR MODEL_DIR NODE_TEST_DIR NPM_DIR MULTI30K_TEXT
"""
import json
import os
import shutil
import subprocess
import sys
import re
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import Checks, call  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402
from npm_packages import npm_ci  # noqa: E402

FLAGS = ["--workers=1", "--http_threads=4", "--max_text_bytes=4096", "--max_beam_size=8"]


def post_json(port, path, body, headers=None):
    return call(port, "POST", path, json.dumps(body),
                {"Content-Type": "application/json", **(headers or {})})


def post_form(port, path, fields):
    return call(port, "POST", path, urllib.parse.urlencode(fields),
                {"Content-Type": "application/x-www-form-urlencoded"})


def parse(result):
    try:
        return json.loads(result[2])
    except ValueError:
        return None


def native(port, texts, **options):
    status, _, body = post_json(port, "/v1/translate", {"texts": texts, "options": options})
    if status != 200:
        raise RuntimeError(f"/v1/translate: {status} {body[:300]!r}")
    return json.loads(body)["translations"]


def expect_error(checks, name, result, status, *needles):
    body = parse(result)
    checks.expect(f"{name}: {status} {{\"error\"}}",
                  result[0] == status and result[1].get("Content-Type") == "application/json"
                  and isinstance(body, dict) and set(body) == {"error"}
                  and all(n in body["error"] for n in needles),
                  f"{result[0]} {result[2][:300]!r}")


def check_one_model(checks, port, sentences):
    best = [t["hypotheses"][0]["text"] for t in native(port, sentences[:3])]

    result = post_json(port, "/translate", {"q": sentences[0], "source": "en", "target": "de"})
    checks.expect("JSON: translatedText as /v1/translate", result[0] == 200
                  and parse(result) == {"translatedText": best[0]}, f"{result[0]} {result[2]!r}")
    result = post_form(port, "/translate", {"q": sentences[1], "source": "en", "target": "de",
                                            "format": "text", "api_key": "ignored"})
    checks.expect("form-encoded, api_key ignored", result[0] == 200
                  and parse(result) == {"translatedText": best[1]}, f"{result[0]} {result[2]!r}")
    # curl -d labels JSON as a form.
    result = call(port, "POST", "/translate",
                  json.dumps({"q": sentences[0], "source": "en", "target": "de"}),
                  {"Content-Type": "application/x-www-form-urlencoded"})
    checks.expect("JSON sent as curl -d sends it", result[0] == 200
                  and parse(result) == {"translatedText": best[0]}, f"{result[0]} {result[2]!r}")
    result = post_json(port, "/translate", {"q": sentences[:3], "source": "en", "target": "de"})
    checks.expect("q an array: translatedText an array", result[0] == 200
                  and parse(result) == {"translatedText": best}, f"{result[0]} {result[2]!r}")

    beam = native(port, [sentences[0]], beam_size=4, num_hypotheses=4)[0]["hypotheses"]
    result = post_json(port, "/translate", {"q": sentences[0], "source": "en", "target": "de",
                                            "alternatives": 3})
    checks.expect("alternatives 3: the best and 3 more of a beam of 4", result[0] == 200
                  and parse(result) == {"translatedText": beam[0]["text"],
                                        "alternatives": [h["text"] for h in beam[1:]]},
                  f"{result[0]} {result[2]!r}")
    result = post_form(port, "/translate", {"q": sentences[0], "source": "en", "target": "de",
                                            "alternatives": "3"})
    checks.expect("alternatives in a form", result[0] == 200
                  and parse(result).get("alternatives") == [h["text"] for h in beam[1:]],
                  f"{result[0]} {result[2]!r}")
    result = post_json(port, "/translate", {"q": sentences[:2], "source": "en", "target": "de",
                                            "alternatives": 1})
    body = parse(result)
    checks.expect("alternatives with q an array: a list per text", result[0] == 200
                  and isinstance(body.get("alternatives"), list) and len(body["alternatives"]) == 2
                  and all(isinstance(a, list) and len(a) == 1 for a in body["alternatives"]),
                  f"{result[0]} {result[2]!r}")

    html = f"<p>{sentences[0]} <i>{sentences[1]}</i></p>"
    html_native = native(port, [html], format="TEXT_FORMAT_HTML")[0]["hypotheses"][0]["text"]
    result = post_json(port, "/translate", {"q": html, "source": "en", "target": "de",
                                            "format": "html"})
    checks.expect("format html as the core's HTML", result[0] == 200
                  and parse(result) == {"translatedText": html_native} and "<i>" in html_native,
                  f"{result[0]} {result[2]!r}")

    result = post_json(port, "/translate", {"q": sentences[0], "source": "auto", "target": "de"})
    checks.expect("source auto: one model into de, detectedLanguage en", result[0] == 200
                  and parse(result) == {"translatedText": best[0], "detectedLanguage":
                                        {"confidence": 100.0, "language": "en"}},
                  f"{result[0]} {result[2]!r}")
    result = post_json(port, "/translate", {"q": sentences[:2], "source": "auto", "target": "de"})
    checks.expect("source auto with an array: detectedLanguage per text", result[0] == 200
                  and parse(result).get("detectedLanguage") == [{"confidence": 100.0,
                                                                 "language": "en"}] * 2,
                  f"{result[0]} {result[2]!r}")

    expect_error(checks, "missing q", post_json(port, "/translate", {"source": "en",
                                                                     "target": "de"}),
                 400, "missing q")
    expect_error(checks, "missing target", post_form(port, "/translate", {"q": "a",
                                                                          "source": "en"}),
                 400, "missing target")
    expect_error(checks, "an unknown pair", post_json(port, "/translate",
                                                      {"q": "a", "source": "en", "target": "fr"}),
                 400, "en to fr", "en->de (multi30k-en-de)")
    expect_error(checks, "auto into a language nobody serves",
                 post_json(port, "/translate", {"q": "a", "source": "auto", "target": "fr"}),
                 400, "auto to fr", "en->de")
    expect_error(checks, "format xml", post_json(port, "/translate", {"q": "a", "source": "en",
                                                                      "target": "de",
                                                                      "format": "xml"}),
                 400, "format")
    expect_error(checks, "alternatives not a number",
                 post_form(port, "/translate", {"q": "a", "source": "en", "target": "de",
                                                "alternatives": "many"}), 400, "alternatives")
    # A form's values are any bytes (this one once crashed the server: an exception while
    # quoting it in the error).
    expect_error(checks, "alternatives not UTF-8 in a form",
                 post_form(port, "/translate", {"q": "a", "source": "en", "target": "de",
                                                "alternatives": b"\x8a"}), 400, "alternatives")
    expect_error(checks, "q not UTF-8 in a form (the core's check, naming q)",
                 post_form(port, "/translate", {"q": b"a\xff", "source": "en", "target": "de"}),
                 400, "q", "UTF-8")
    expect_error(checks, "alternatives over the beam limit (the core's check)",
                 post_json(port, "/translate", {"q": "a", "source": "en", "target": "de",
                                                "alternatives": 8}),
                 400, "alternatives 8", "--max_beam_size")
    expect_error(checks, "a text over --max_text_bytes (the core's check, naming q)",
                 post_json(port, "/translate", {"q": "a " * 3000, "source": "en", "target": "de"}),
                 400, "q ", "--max_text_bytes")
    expect_error(checks, "not JSON", call(port, "POST", "/translate", "{oops",
                                          {"Content-Type": "application/json"}), 400,
                 "Invalid request: the body is not JSON: ")
    expect_error(checks, "JSON, but not an object",
                 call(port, "POST", "/translate", '["a"]', {"Content-Type": "application/json"}),
                 400, "the body is JSON, but an array of 1 element, not an object")
    # Nested values (these took the server down: a 1,386-byte body, formatted recursively into
    # the error on a request thread's 100 KiB stack) are refused before anything is built, and
    # never quoted.
    deep = json.dumps({"q": "a", "source": "en", "target": "de"})[:-1]
    expect_error(checks, "format nested 666 deep",
                 call(port, "POST", "/translate",
                      deep + ', "format": ' + "[" * 666 + "]" * 666 + "}",
                      {"Content-Type": "application/json"}),
                 400, "the body is JSON nested deeper than 64 levels")
    expect_error(checks, "alternatives of objects nested 1,000 deep",
                 call(port, "POST", "/translate",
                      deep + ', "alternatives": ' + '{"a":' * 1000 + "1" + "}" * 1000 + "}",
                      {"Content-Type": "application/json"}),
                 400, "the body is JSON nested deeper than 64 levels")
    expect_error(checks, "format an array within the depth: described, not quoted",
                 post_json(port, "/translate", {"q": "a", "source": "en", "target": "de",
                                                "format": [[["html"]]]}),
                 400, "format is an array of 1 element; it is text or html")
    expect_error(checks, "more JSON values than the limit",
                 post_json(port, "/translate", {"q": [""] * 400, "source": "en", "target": "de"}),
                 400, "the body is JSON of more than 320 values, the limit (the server's "
                 "--max_texts_per_request (256) plus 64)")
    expect_error(checks, "a form of more fields than the limit",
                 call(port, "POST", "/translate",
                      "q=a&source=en&target=de" + "".join(f"&a{i}=" for i in range(400)),
                      {"Content-Type": "application/x-www-form-urlencoded"}),
                 400, "the form has 403 fields; the limit is 320")
    checks.expect("the server still answers after them",
                  call(port, "GET", "/languages")[0] == 200)
    expect_error(checks, "GET /translate", call(port, "GET", "/translate"), 405, "POST")
    expect_error(checks, "a bad X-Request-Timeout",
                 post_json(port, "/translate", {"q": "a", "source": "en", "target": "de"},
                           {"X-Request-Timeout": "soon"}), 400, "X-Request-Timeout")

    result = call(port, "GET", "/languages")
    checks.expect("/languages from the model's config", result[0] == 200 and parse(result) == [
        {"code": "de", "name": "German", "targets": []},
        {"code": "en", "name": "English", "targets": ["de"]}], f"{result[0]} {result[2]!r}")
    result = call(port, "GET", "/frontend/settings")
    settings = parse(result)
    checks.expect("/frontend/settings", result[0] == 200 and isinstance(settings, dict)
                  and settings.get("charLimit") == 4096 and settings.get("apiKeys") is False
                  and settings.get("keyRequired") is False and settings.get("suggestions") is False
                  and settings.get("supportedFilesFormat") == []
                  and isinstance(settings.get("frontendTimeout"), int)
                  and settings.get("language") == {"source": {"code": "en", "name": "English"},
                                                   "target": {"code": "de", "name": "German"}},
                  f"{result[0]} {result[2]!r}")


def check_two_models(checks, bin_dir, model_dir, sentence):
    """A second model into German from another source: auto is ambiguous and says so."""
    with tempfile.TemporaryDirectory(prefix="mtserve_fr_de_") as fr_dir:
        for name in os.listdir(model_dir):
            if name != "tokenizer_config.json":
                shutil.copy(os.path.join(model_dir, name), fr_dir)
        config = json.load(open(os.path.join(model_dir, "tokenizer_config.json")))
        config["source_lang"] = "fr"
        json.dump(config, open(os.path.join(fr_dir, "tokenizer_config.json"), "w"))
        server = MtserveProcess(os.path.join(bin_dir, "mtserve"), *FLAGS,
                                f"--model=en-de={model_dir}", f"--model=fr-de={fr_dir}")
        try:
            port = server.http_port
            expect_error(checks, "auto with two sources into de",
                         post_json(port, "/translate", {"q": sentence, "source": "auto",
                                                        "target": "de"}),
                         400, "en->de (en-de)", "fr->de (fr-de)", "give the source")
            result = post_json(port, "/translate", {"q": sentence, "source": "fr", "target": "de"})
            checks.expect("fr->de routes to the fr-de model", result[0] == 200, result[2][:200])
            result = call(port, "GET", "/languages")
            checks.expect("/languages with two models", result[0] == 200 and parse(result) == [
                {"code": "de", "name": "German", "targets": []},
                {"code": "en", "name": "English", "targets": ["de"]},
                {"code": "fr", "name": "French", "targets": ["de"]}], result[2][:300])
        finally:
            server.stop()


def check_queue_full(checks, bin_dir, sentences):
    """429 as LibreTranslate answers when it is too busy: a small queue decoded a sentence at a
    time, filled by two requests of 8 texts of 16 sentences (16 sentences queued, 16 texts
    waiting for room: --max_queued_texts counts both), refuses one more text."""
    server = MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1",
                            "--max_texts_per_request=8", "--max_queued_texts=16",
                            "--max_batch_size=1", "--cache_bytes=0")
    try:
        port = server.http_port
        texts = {"texts": [" ".join(sentences[100 + i:116 + i]) for i in range(8)]}
        body = {"q": sentences[0], "source": "en", "target": "de"}
        full = None
        for _ in range(5):
            threads = [threading.Thread(target=post_json, args=(port, "/v1/translate", texts,
                                                                {"X-Request-Timeout": "5s"}),
                                        daemon=True) for _ in range(2)]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and any(t.is_alive() for t in threads):
                # Both requests' sentences in the scheduler: more than one request's 128.
                depth = re.search(
                    r"^mtserve_queue_depth\{[^}]*\} (\d+)",
                    urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/metrics")
                    .read().decode(), re.MULTILINE)
                if depth and int(depth.group(1)) > 140:
                    break
                time.sleep(0.005)
            full = post_json(port, "/translate", body)
            for thread in threads:
                thread.join(120)
            if full[0] == 429:
                break
        expect_error(checks, "the queue full", full, 429, "queue")
    finally:
        server.stop()


def main():
    bin_dir, model_dir, node_test_dir, npm_dir, source = sys.argv[1:6]
    with open(source, encoding="utf-8") as f:
        all_sentences = [line.strip() for line in f if line.strip()]
    sentences = all_sentences[:4]
    node_modules = npm_ci(node_test_dir, npm_dir)
    checks = Checks()
    server = MtserveProcess(os.path.join(bin_dir, "mtserve"), *FLAGS)
    try:
        check_one_model(checks, server.http_port, sentences)
        node = subprocess.run(
            ["node", os.path.join(node_test_dir, "client_test.js"), str(server.http_port),
             *sentences],
            env={**os.environ, "NODE_PATH": node_modules},
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
        print(node.stdout, end="")
        checks.expect("the npm client libretranslate's checks", node.returncode == 0,
                      f"exit {node.returncode}")
    finally:
        server.stop()
    check_two_models(checks, bin_dir, model_dir, sentences[0])
    check_queue_full(checks, bin_dir, all_sentences)
    print(f"{checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
