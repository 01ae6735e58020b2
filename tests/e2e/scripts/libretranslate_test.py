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
       [-- UNITTEST ARGUMENTS]
"""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call, post_form, post_json  # noqa: E402
from e2e_suite import native_translations as native, parse_json as parse  # noqa: E402
from npm_packages import run_node_checks  # noqa: E402

FLAGS = ["--workers=1", "--http_threads=4", "--max_text_bytes=4096", "--max_beam_size=8"]
# The Multi30k test set; SENTENCES its first four.
ALL_SENTENCES = []
SENTENCES = []


def setUpModule():
    ALL_SENTENCES.extend(e2e_suite.nonblank_lines(e2e_suite.ARGS.multi30k_text))
    SENTENCES.extend(ALL_SENTENCES[:4])


class LibreTranslateTestCase(e2e_suite.MtserveTestCase):
    def assertAnswer(self, result, want):
        """A 200 whose JSON body is `want`."""
        self.assertEqual(result[0], 200, result[2][:300])
        self.assertEqual(parse(result), want)

    def assertLibreError(self, result, status, *needles):
        """LibreTranslate's error answer: this status, JSON {"error"} and nothing more, the
        message holding every needle."""
        body = parse(result)
        if not (result[0] == status and result[1].get("Content-Type") == "application/json"
                and isinstance(body, dict) and set(body) == {"error"}
                and all(n in body["error"] for n in needles)):
            self.fail(f"got {result[0]} {result[1].get('Content-Type')} {result[2][:300]!r}, "
                      f"want {status} {{\"error\"}} holding {needles}")


class OneModelTest(LibreTranslateTestCase):
    """The default model (en->de); `best`: the native answers for the first three sentences."""

    server_flags = FLAGS

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.server.http_port
        cls.best = [t["hypotheses"][0]["text"] for t in native(cls.port, SENTENCES[:3])]

    def translate(self, **fields):
        return post_json(self.port, "/translate", {"source": "en", "target": "de", **fields})

    def test_a_json_body_is_translated_as_v1_translate(self):
        self.assertAnswer(self.translate(q=SENTENCES[0]), {"translatedText": self.best[0]})

    def test_a_form_encoded_body_is_translated_its_api_key_ignored(self):
        result = post_form(self.port, "/translate", {"q": SENTENCES[1], "source": "en",
                                                     "target": "de", "format": "text",
                                                     "api_key": "ignored"})
        self.assertAnswer(result, {"translatedText": self.best[1]})

    def test_json_labelled_as_a_form_is_read_as_curl_d_sends_it(self):
        result = call(self.port, "POST", "/translate",
                      json.dumps({"q": SENTENCES[0], "source": "en", "target": "de"}),
                      {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertAnswer(result, {"translatedText": self.best[0]})

    def test_q_an_array_gives_translated_text_an_array(self):
        self.assertAnswer(self.translate(q=SENTENCES[:3]), {"translatedText": self.best})

    def test_alternatives_are_the_rest_of_a_beam(self):
        beam = native(self.port, [SENTENCES[0]], beam_size=4, num_hypotheses=4)[0]["hypotheses"]
        alternatives = [h["text"] for h in beam[1:]]
        with self.subTest("JSON: the best and 3 more of a beam of 4"):
            self.assertAnswer(self.translate(q=SENTENCES[0], alternatives=3),
                              {"translatedText": beam[0]["text"], "alternatives": alternatives})
        with self.subTest("in a form"):
            result = post_form(self.port, "/translate", {"q": SENTENCES[0], "source": "en",
                                                         "target": "de", "alternatives": "3"})
            self.assertEqual(result[0], 200, result[2][:300])
            self.assertEqual(parse(result).get("alternatives"), alternatives)

    def test_alternatives_with_q_an_array_are_a_list_per_text(self):
        result = self.translate(q=SENTENCES[:2], alternatives=1)
        self.assertEqual(result[0], 200, result[2][:300])
        alternatives = parse(result).get("alternatives")
        self.assertIsInstance(alternatives, list, result[2][:300])
        self.assertEqual(len(alternatives), 2, result[2][:300])
        for per_text in alternatives:
            self.assertIsInstance(per_text, list, result[2][:300])
            self.assertEqual(len(per_text), 1, result[2][:300])

    def test_format_html_is_the_cores_html(self):
        html = f"<p>{SENTENCES[0]} <i>{SENTENCES[1]}</i></p>"
        html_native = native(self.port, [html],
                             format="TEXT_FORMAT_HTML")[0]["hypotheses"][0]["text"]
        self.assertIn("<i>", html_native)
        self.assertAnswer(self.translate(q=html, format="html"), {"translatedText": html_native})

    def assertDetectedEnglish(self, detected):
        """A whole English sentence, detected (not assumed: a real confidence below 100)."""
        self.assertEqual(set(detected), {"confidence", "language"})
        self.assertEqual(detected["language"], "en")
        self.assertTrue(50 < detected["confidence"] < 100, detected)

    def test_source_auto_with_one_model_into_the_target_detects_its_source(self):
        result = post_json(self.port, "/translate", {"q": SENTENCES[0], "source": "auto",
                                                     "target": "de"})
        self.assertEqual(result[0], 200, result[2][:300])
        self.assertEqual(parse(result)["translatedText"], self.best[0])
        self.assertDetectedEnglish(parse(result)["detectedLanguage"])

    def test_source_auto_with_q_an_array_detects_per_text(self):
        result = post_json(self.port, "/translate", {"q": SENTENCES[:2], "source": "auto",
                                                     "target": "de"})
        self.assertEqual(result[0], 200, result[2][:300])
        detected = parse(result).get("detectedLanguage")
        self.assertEqual(len(detected), 2)
        for each in detected:
            self.assertDetectedEnglish(each)

    def test_missing_fields_are_400(self):
        with self.subTest("missing q"):
            self.assertLibreError(post_json(self.port, "/translate", {"source": "en",
                                                                      "target": "de"}),
                                  400, "missing q")
        with self.subTest("missing target"):
            self.assertLibreError(post_form(self.port, "/translate", {"q": "a", "source": "en"}),
                                  400, "missing target")

    def test_a_pair_nobody_serves_is_400_naming_the_pairs_served(self):
        with self.subTest("a target nobody serves"):
            self.assertLibreError(self.translate(q="a", target="fr"), 400,
                                  "target: no model here translates into fr",
                                  "en->de (multi30k-en-de)")
        with self.subTest("auto into a language nobody serves"):
            self.assertLibreError(
                post_json(self.port, "/translate", {"q": "a", "source": "auto", "target": "fr"}),
                400, "target: no model here translates into fr", "en->de")
        with self.subTest("a source nobody serves into the target"):
            self.assertLibreError(
                post_json(self.port, "/translate", {"q": "a", "source": "fr", "target": "de"}),
                400, "source: no model here translates fr into de", "en->de (multi30k-en-de)")

    def test_bad_values_are_400_naming_the_field(self):
        form = {"q": "a", "source": "en", "target": "de"}
        for name, result, needles in [
                ("format xml", self.translate(q="a", format="xml"), ["format"]),
                ("alternatives not a number",
                 post_form(self.port, "/translate", {**form, "alternatives": "many"}),
                 ["alternatives"]),
                # A form's values are any bytes (this one once crashed the server: an exception
                # while quoting it in the error).
                ("alternatives not UTF-8 in a form",
                 post_form(self.port, "/translate", {**form, "alternatives": b"\x8a"}),
                 ["alternatives"]),
                ("q not UTF-8 in a form (the core's check, naming q)",
                 post_form(self.port, "/translate", {**form, "q": b"a\xff"}), ["q", "UTF-8"]),
                ("alternatives over the beam limit (the core's check)",
                 self.translate(q="a", alternatives=8), ["alternatives 8", "--max_beam_size"]),
                ("a text over --max_text_bytes (the core's check, naming q)",
                 self.translate(q="a " * 3000), ["q ", "--max_text_bytes"])]:
            with self.subTest(name):
                self.assertLibreError(result, 400, *needles)

    def test_bodies_that_are_not_a_request_are_400(self):
        json_type = {"Content-Type": "application/json"}
        with self.subTest("not JSON"):
            self.assertLibreError(call(self.port, "POST", "/translate", "{oops", json_type), 400,
                                  "Invalid request: the body is not JSON: ")
        with self.subTest("JSON, but not an object"):
            self.assertLibreError(call(self.port, "POST", "/translate", '["a"]', json_type), 400,
                                  "the body is JSON, but an array of 1 element, not an object")

    def test_deep_and_large_bodies_are_refused_unquoted_and_the_server_still_answers(self):
        # Nested values (these took the server down: a 1,386-byte body, formatted recursively
        # into the error on a request thread's 100 KiB stack) are refused before anything is
        # built, and never quoted.
        json_type = {"Content-Type": "application/json"}
        deep = json.dumps({"q": "a", "source": "en", "target": "de"})[:-1]
        for name, result, needle in [
                ("format nested 666 deep",
                 call(self.port, "POST", "/translate",
                      deep + ', "format": ' + "[" * 666 + "]" * 666 + "}", json_type),
                 "the body is JSON nested deeper than 64 levels"),
                ("alternatives of objects nested 1,000 deep",
                 call(self.port, "POST", "/translate",
                      deep + ', "alternatives": ' + '{"a":' * 1000 + "1" + "}" * 1000 + "}",
                      json_type),
                 "the body is JSON nested deeper than 64 levels"),
                ("format an array within the depth: described, not quoted",
                 self.translate(q="a", format=[[["html"]]]),
                 "format is an array of 1 element; it is text, html, markdown, srt or vtt"),
                ("more JSON values than the limit", self.translate(q=[""] * 3200),
                 "the body is JSON of more than 3136 values, the limit (the server's "
                 "--max_texts_per_request (256), plus --max_request_terms (256) times 11, "
                 "plus 64)"),
                ("a form of more fields than the limit",
                 call(self.port, "POST", "/translate",
                      "q=a&source=en&target=de" + "".join(f"&a{i}=" for i in range(3200)),
                      {"Content-Type": "application/x-www-form-urlencoded"}),
                 "the form has 3203 fields; the limit is 3136")]:
            with self.subTest(name):
                self.assertLibreError(result, 400, needle)
        self.assertEqual(call(self.port, "GET", "/languages")[0], 200,
                         "the server still answers after them")

    def test_get_translate_is_405(self):
        self.assertLibreError(call(self.port, "GET", "/translate"), 405, "POST")

    def test_a_bad_x_request_timeout_is_400(self):
        self.assertLibreError(
            post_json(self.port, "/translate", {"q": "a", "source": "en", "target": "de"},
                      {"X-Request-Timeout": "soon"}), 400, "X-Request-Timeout")

    def test_languages_come_from_the_models_config(self):
        self.assertAnswer(call(self.port, "GET", "/languages"), [
            {"code": "de", "name": "German", "targets": []},
            {"code": "en", "name": "English", "targets": ["de"]}])

    def test_frontend_settings(self):
        result = call(self.port, "GET", "/frontend/settings")
        self.assertEqual(result[0], 200, result[2][:300])
        settings = parse(result)
        self.assertIsInstance(settings, dict, result[2][:300])
        self.assertEqual(settings.get("charLimit"), 4096, "--max_text_bytes")
        self.assertIs(settings.get("apiKeys"), False)
        self.assertIs(settings.get("keyRequired"), False)
        self.assertIs(settings.get("suggestions"), False)
        # Files are translated (file_api_test.py drives /translate_file).
        self.assertIs(settings.get("filesTranslation"), True)
        self.assertIn(".md", settings.get("supportedFilesFormat"))
        self.assertIsInstance(settings.get("frontendTimeout"), int)
        self.assertEqual(settings.get("language"), {"source": {"code": "en", "name": "English"},
                                                    "target": {"code": "de", "name": "German"}})

    def test_the_npm_client_translates_as_the_native_api(self):
        args = e2e_suite.ARGS
        code, output = run_node_checks(args.node_test_dir, args.npm_dir, "client_test.js",
                                       str(self.port), *SENTENCES)
        self.assertEqual(code, 0, f"client_test.js's checks:\n{output}")


class TwoModelsTest(LibreTranslateTestCase):
    """A second model into German from another source (the model relabelled fr): auto reads the
    text to choose between them."""

    @classmethod
    def setUpClass(cls):
        model_dir = e2e_suite.ARGS.model_dir
        fr_dir = cls.class_temp_dir()
        for name in os.listdir(model_dir):
            if name != "tokenizer_config.json":
                shutil.copy(os.path.join(model_dir, name), fr_dir)
        with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
            config = json.load(f)
        config["source_lang"] = "fr"
        with open(os.path.join(fr_dir, "tokenizer_config.json"), "w") as f:
            json.dump(config, f)
        cls.server_flags = (*FLAGS, f"--model=en-de={model_dir}", f"--model=fr-de={fr_dir}")
        super().setUpClass()
        cls.port = cls.server.http_port

    def test_auto_with_two_sources_into_the_target_detects_the_text(self):
        result = post_json(self.port, "/translate", {"q": SENTENCES[0], "source": "auto",
                                                     "target": "de"})
        self.assertEqual(result[0], 200, result[2][:300])
        self.assertEqual(parse(result)["detectedLanguage"]["language"], "en")
        # The default model is en-de, the first served.
        self.assertEqual(parse(result)["translatedText"],
                         native(self.port, [SENTENCES[0]])[0]["hypotheses"][0]["text"])

    def test_the_source_routes_to_its_model(self):
        result = post_json(self.port, "/translate", {"q": SENTENCES[0], "source": "fr",
                                                     "target": "de"})
        self.assertEqual(result[0], 200, f"fr->de: {result[2][:200]!r}")

    def test_languages_lists_both_sources(self):
        self.assertAnswer(call(self.port, "GET", "/languages"), [
            {"code": "de", "name": "German", "targets": []},
            {"code": "en", "name": "English", "targets": ["de"]},
            {"code": "fr", "name": "French", "targets": ["de"]}])


class QueueFullTest(LibreTranslateTestCase):
    def test_a_full_queue_is_429_as_libretranslate_answers_when_too_busy(self):
        server = self.start_mtserve("--workers=1", "--max_texts_per_request=8",
                                    "--max_queued_texts=16", "--max_batch_size=1",
                                    "--cache_bytes=0")
        full = e2e_suite.answer_while_queue_full(
            server, ALL_SENTENCES,
            lambda: post_json(server.http_port, "/translate",
                              {"q": ALL_SENTENCES[0], "source": "en", "target": "de"}))
        self.assertLibreError(full, 429, "queue")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "model_dir", "node_test_dir", "npm_dir", "multi30k_text")
