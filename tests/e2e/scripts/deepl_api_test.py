#!/usr/bin/env python3
"""mtserve's DeepL-compatible API (/v2/translate, /v2/languages, /v2/usage, the v2 glossary
routes, /v2/document) against a real mtserve on ports the kernel chooses.

- DeepL's published npm client `deepl-node` (tests/deepl, pinned by its package-lock.json),
  pointed at mtserve with serverUrl, translates one text, many, HTML, lists the languages, reads
  the usage, makes, uses, lists, reads and deletes a glossary and translates a .txt document; its
  results equal the native /v1/translate answers (tests/deepl/client_test.js). `npm ci` installs
  the client into NPM_DIR unless that version is there already, so a second run needs no network.
- With the Python standard library: every route, JSON and form bodies, DeepL's codes (EN-GB,
  PT-BR) and their answers, and every error as DeepL's {"message": ...} with its status: 400 for a
  bad request, 403 for a missing or unknown key, 404, 405, 413, 429 (requests_per_minute, a full
  queue) and 456 (characters_per_day).

Glossaries need the server's glossary store (the glossaries' wiring) and glossary translations the
decoder's terms (lexically constrained decoding): the tests of both fail until those are in.

Usage: deepl_api_test.py BIN_DIR NODE_TEST_DIR NPM_DIR MULTI30K_TEXT [-- UNITTEST ARGUMENTS]
"""
import hashlib
import json
import os
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call, native_translations, parse_json as parse  # noqa: E402
from e2e_suite import post_form, post_json  # noqa: E402
from urllib3.filepost import encode_multipart_formdata  # noqa: E402
from npm_packages import run_node_checks  # noqa: E402

FLAGS = ["--workers=1", "--http_threads=4", "--max_text_bytes=4096"]
# The Multi30k test set; SENTENCES its first four.
ALL_SENTENCES = []
SENTENCES = []
FORM = "application/x-www-form-urlencoded"


def setUpModule():
    ALL_SENTENCES.extend(e2e_suite.nonblank_lines(e2e_suite.ARGS.multi30k_text))
    SENTENCES.extend(ALL_SENTENCES[:4])


def multipart(fields, files):
    """(body, Content-Type) of a multipart/form-data form, by urllib3 (code nobody here wrote):
    `fields` {name: value}, `files` {name: (file name, bytes)}."""
    parts = dict(fields)
    parts.update({name: (file_name, data, "text/plain")
                  for name, (file_name, data) in files.items()})
    return encode_multipart_formdata(parts)


def native(port, texts, **options):
    """The best hypothesis's text of each of `texts` through the native API."""
    return [t["hypotheses"][0]["text"] for t in native_translations(port, texts, **options)]


class DeepLTestCase(e2e_suite.MtserveTestCase):
    def assertAnswer(self, result, want):
        """A 200 whose JSON body is `want`."""
        self.assertEqual(result[0], 200, result[2][:300])
        self.assertEqual(parse(result), want)

    def assertDeepLError(self, result, status, *needles):
        """DeepL's error answer: this status, JSON {"message"} and nothing more, the message
        holding every needle."""
        body = parse(result)
        if not (result[0] == status and result[1].get("Content-Type") == "application/json"
                and isinstance(body, dict) and set(body) == {"message"}
                and all(n in body["message"] for n in needles)):
            self.fail(f"got {result[0]} {result[1].get('Content-Type')} {result[2][:300]!r}, "
                      f"want {status} {{\"message\"}} holding {needles}")

    def translations(self, result):
        """The texts of a 200 /v2/translate answer, each checked to be detected as EN."""
        self.assertEqual(result[0], 200, result[2][:300])
        answer = parse(result)
        self.assertEqual(list(answer), ["translations"])
        for translation in answer["translations"]:
            self.assertEqual(translation["detected_source_language"], "EN", translation)
        return [t["text"] for t in answer["translations"]]


class TranslateTest(DeepLTestCase):
    """/v2/translate, /v2/languages, /v2/usage on the default model (en->de), without keys."""

    server_flags = FLAGS

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.server.http_port
        cls.best = native(cls.port, SENTENCES[:3])

    def test_a_form_with_text_repeated_is_translated_as_v1_translate(self):
        result = post_form(self.port, "/v2/translate",
                           [("text", SENTENCES[0]), ("text", SENTENCES[1]),
                            ("target_lang", "DE"), ("source_lang", "EN")])
        self.assertEqual(self.translations(result), self.best[:2])

    def test_json_text_an_array_or_a_string(self):
        with self.subTest("an array, source detected"):
            result = post_json(self.port, "/v2/translate",
                               {"text": SENTENCES[:3], "target_lang": "de"})
            self.assertEqual(self.translations(result), self.best)
        with self.subTest("a string"):
            result = post_json(self.port, "/v2/translate",
                               {"text": SENTENCES[0], "target_lang": "DE", "source_lang": "en"})
            self.assertEqual(self.translations(result), self.best[:1])

    def test_json_labelled_as_a_form_is_read_as_json(self):
        result = call(self.port, "POST", "/v2/translate",
                      json.dumps({"text": [SENTENCES[0]], "target_lang": "DE"}),
                      {"Content-Type": FORM})
        self.assertEqual(self.translations(result), self.best[:1])

    def test_the_key_may_be_sent_without_keys_required(self):
        result = post_form(self.port, "/v2/translate",
                           {"text": SENTENCES[0], "target_lang": "DE"},
                           {"Authorization": "DeepL-Auth-Key anything"})
        self.assertEqual(self.translations(result), self.best[:1])

    def test_tag_handling_html_and_xml_keep_the_markup(self):
        html = f"<p>{SENTENCES[0]} <b>{SENTENCES[1]}</b></p>"
        want = native(self.port, [html], format="TEXT_FORMAT_HTML")
        self.assertIn("<b>", want[0])
        with self.subTest("html"):
            result = post_json(self.port, "/v2/translate",
                               {"text": [html], "target_lang": "DE", "tag_handling": "html"})
            self.assertEqual(self.translations(result), want)
        with self.subTest("xml: its markup kept as written"):
            xml = f"<doc><par id=\"1\">{SENTENCES[0]}</par></doc>"
            result = post_json(self.port, "/v2/translate",
                               {"text": [xml], "target_lang": "DE", "tag_handling": "xml"})
            text = self.translations(result)[0]
            self.assertTrue(text.startswith('<doc><par id="1">') and text.endswith("</par></doc>"),
                            text)

    def test_ignore_tags_keep_their_content(self):
        # The elements' content kept as written (as translate="no": the core's SentenceRules).
        html = f"<p>{SENTENCES[0]} <x>{SENTENCES[1]}</x></p>"
        result = post_json(self.port, "/v2/translate",
                           {"text": [html], "target_lang": "DE", "tag_handling": "html",
                            "ignore_tags": ["x"]})
        self.assertIn(f"<x>{SENTENCES[1]}</x>", self.translations(result)[0])

    def test_split_sentences_0_takes_each_text_as_one_sentence(self):
        text = " ".join(SENTENCES[:2])
        want = native(self.port, [text], split_sentences=False)
        self.assertNotEqual(want, native(self.port, [text]), "the split must matter here")
        for value in ("0", 0):
            with self.subTest(value=value):
                result = post_json(self.port, "/v2/translate",
                                   {"text": [text], "target_lang": "DE", "split_sentences": value})
                self.assertEqual(self.translations(result), want)
        with self.subTest("nonewlines splits"):
            result = post_form(self.port, "/v2/translate",
                               {"text": text, "target_lang": "DE", "split_sentences": "nonewlines"})
            self.assertEqual(self.translations(result), native(self.port, [text]))

    def test_options_mtserve_takes_as_default_are_accepted(self):
        for name, value in [("formality", "default"), ("formality", "prefer_more"),
                            ("formality", "prefer_less"), ("preserve_formatting", "1"),
                            ("preserve_formatting", True), ("context", "A bike shop."),
                            ("outline_detection", "0")]:
            with self.subTest(name=name, value=value):
                result = post_json(self.port, "/v2/translate",
                                   {"text": [SENTENCES[0]], "target_lang": "DE", name: value})
                self.assertEqual(self.translations(result), self.best[:1])

    def test_show_billed_characters_counts_the_source_characters(self):
        text = "Ein Männlein."  # 13 characters, 14 bytes; the model reads it as English.
        result = post_json(self.port, "/v2/translate",
                           {"text": [SENTENCES[0], text], "target_lang": "DE",
                            "source_lang": "EN", "show_billed_characters": True})
        self.assertEqual(result[0], 200, result[2][:300])
        billed = [t["billed_characters"] for t in parse(result)["translations"]]
        self.assertEqual(billed, [len(SENTENCES[0]), 13])

    def test_regional_target_codes_name_the_models_language(self):
        # The model's target is German; EN-GB and PT-BR are read as en and pt, which it is not.
        for code, language in [("EN-GB", "en"), ("en-us", "en"), ("PT-BR", "pt")]:
            with self.subTest(code):
                self.assertDeepLError(
                    post_json(self.port, "/v2/translate", {"text": ["a"], "target_lang": code}),
                    400, f"no model here translates into {language}")

    def test_bad_requests_are_400_naming_the_field(self):
        good = {"text": ["a"], "target_lang": "DE"}
        multipart_body, multipart_type = multipart({"text": "a", "target_lang": "DE"}, {})
        for name, result, needles in [
                ("no text", post_json(self.port, "/v2/translate", {"target_lang": "DE"}),
                 ["'text' not specified"]),
                ("no target_lang", post_form(self.port, "/v2/translate", {"text": "a"}),
                 ["'target_lang' not specified"]),
                ("text of numbers",
                 post_json(self.port, "/v2/translate", {**good, "text": [1]}), ["'text'"]),
                ("target_lang not a code",
                 post_json(self.port, "/v2/translate", {**good, "target_lang": "German!"}),
                 ["target_lang", "not a language code"]),
                ("tag_handling", post_json(self.port, "/v2/translate",
                                           {**good, "tag_handling": "markdown"}),
                 ["tag_handling", "html or xml"]),
                ("split_sentences", post_json(self.port, "/v2/translate",
                                              {**good, "split_sentences": "2"}),
                 ["split_sentences", "0, 1 or nonewlines"]),
                ("formality more: not supported",
                 post_form(self.port, "/v2/translate", {**good, "formality": "more"}),
                 ["formality 'more' is not supported"]),
                ("formality less: not supported",
                 post_json(self.port, "/v2/translate", {**good, "formality": "less"}),
                 ["formality 'less' is not supported"]),
                ("glossary_id without source_lang",
                 post_json(self.port, "/v2/translate", {**good, "glossary_id": "x"}),
                 ["'glossary_id' needs 'source_lang'"]),
                ("ignore_tags without tag_handling",
                 post_json(self.port, "/v2/translate", {**good, "ignore_tags": "x"}),
                 ["ignore_tags", "tag_handling"]),
                ("ignore_tags not tag names",
                 post_json(self.port, "/v2/translate",
                           {**good, "tag_handling": "html", "ignore_tags": "a,<b>"}),
                 ["ignore_tags", "<b>"]),
                ("not JSON", call(self.port, "POST", "/v2/translate", "{oops",
                                  {"Content-Type": "application/json"}), ["not JSON"]),
                ("a multipart body",
                 call(self.port, "POST", "/v2/translate", multipart_body,
                      {"Content-Type": multipart_type}), ["multipart"]),
                ("a target nobody serves",
                 post_json(self.port, "/v2/translate", {**good, "target_lang": "FR"}),
                 ["target_lang: no model here translates into fr"]),
                ("a text over --max_text_bytes (the core's check, naming text)",
                 post_json(self.port, "/v2/translate", {**good, "text": ["a " * 3000]}),
                 ["text[0]", "--max_text_bytes"])]:
            with self.subTest(name):
                self.assertDeepLError(result, 400, *needles)

    def test_other_statuses_in_deepls_shape(self):
        with self.subTest("405"):
            self.assertDeepLError(call(self.port, "GET", "/v2/translate"), 405, "POST")
        with self.subTest("404: a route that is not one"):
            self.assertDeepLError(call(self.port, "GET", "/v2/nothing"), 404, "/v2/translate")
        with self.subTest("404: an unknown glossary_id"):
            self.assertDeepLError(
                post_json(self.port, "/v2/translate", {"text": ["a"], "target_lang": "DE",
                                                       "source_lang": "EN", "glossary_id": "x"}),
                404)
        with self.subTest("413: a body over the limit"):
            self.assertDeepLError(
                post_form(self.port, "/v2/translate",
                          {"text": "a" * (8 << 20), "target_lang": "DE"}), 413)

    def test_languages(self):
        source = [{"language": "EN", "name": "English"}]
        with self.subTest("source, the default"):
            self.assertAnswer(call(self.port, "GET", "/v2/languages"), source)
            self.assertAnswer(call(self.port, "GET", "/v2/languages?type=source"), source)
        with self.subTest("target"):
            self.assertAnswer(call(self.port, "GET", "/v2/languages?type=target"),
                              [{"language": "DE", "name": "German", "supports_formality": False}])
        with self.subTest("POST with a form"):
            result = call(self.port, "POST", "/v2/languages", "type=target",
                          {"Content-Type": FORM})
            self.assertEqual(parse(result)[0]["language"], "DE", result[2][:300])
        with self.subTest("another type"):
            self.assertDeepLError(call(self.port, "GET", "/v2/languages?type=both"), 400, "type")

    def test_usage_without_keys_has_no_limit(self):
        self.assertAnswer(call(self.port, "GET", "/v2/usage"),
                          {"character_count": 0, "character_limit": 1000000000000})

    def test_glossary_language_pairs(self):
        self.assertAnswer(call(self.port, "GET", "/v2/glossary-language-pairs"),
                          {"supported_languages": [{"source_lang": "en", "target_lang": "de"}]})

    def test_the_npm_client_translates_as_the_native_api(self):
        args = e2e_suite.ARGS
        code, output = run_node_checks(args.node_test_dir, args.npm_dir, "client_test.js",
                                       str(self.port), *SENTENCES)
        self.assertEqual(code, 0, f"client_test.js's checks:\n{output}")


class DocumentTest(DeepLTestCase):
    """/v2/document: a file job with DeepL's document_id and document_key."""

    server_flags = FLAGS

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.server.http_port

    def upload(self, fields, files):
        body, content_type = multipart(fields, files)
        return call(self.port, "POST", "/v2/document", body, {"Content-Type": content_type})

    def wait_done(self, document, key):
        for _ in range(600):  # Bounded: a broken server fails rather than hangs.
            result = post_form(self.port, f"/v2/document/{document}", {"document_key": key})
            self.assertEqual(result[0], 200, result[2][:300])
            status = parse(result)
            self.assertEqual(status["document_id"], document)
            self.assertIn(status["status"], ("queued", "translating", "done"), status)
            if status["status"] == "done":
                return
            time.sleep(0.05)
        self.fail("the document was not translated")

    def test_a_text_file_is_translated_as_v1_translate_and_downloaded_once(self):
        text = f"{SENTENCES[0]}\n\n{SENTENCES[1]}\n"
        result = self.upload({"target_lang": "DE", "source_lang": "EN"},
                             {"file": ("notes.txt", text.encode())})
        self.assertEqual(result[0], 200, result[2][:300])
        ids = parse(result)
        self.assertEqual(set(ids), {"document_id", "document_key"})
        document, key = ids["document_id"], ids["document_key"]
        self.wait_done(document, key)
        with self.subTest("the status as JSON, and by GET with the key in the query"):
            got = call(self.port, "GET", f"/v2/document/{document}?document_key={key}")
            self.assertAnswer(got, {"document_id": document, "status": "done"})
        result = post_json(self.port, f"/v2/document/{document}/result", {"document_key": key})
        self.assertEqual(result[0], 200, result[2][:300])
        self.assertEqual(result[2].decode(), native(self.port, [text])[0])
        self.assertIn("notes.txt", result[1].get("Content-Disposition"))
        with self.subTest("downloaded, it is gone (as DeepL's)"):
            self.assertDeepLError(
                post_form(self.port, f"/v2/document/{document}/result", {"document_key": key}),
                404, "no document")

    def test_a_wrong_key_finds_nothing(self):
        result = self.upload({"target_lang": "DE"}, {"file": ("a.txt", SENTENCES[0].encode())})
        document = parse(result)["document_id"]
        self.assertDeepLError(
            post_form(self.port, f"/v2/document/{document}", {"document_key": "x" * 16}), 404,
            "no document")
        self.assertDeepLError(post_form(self.port, f"/v2/document/{document}", {}), 400,
                              "'document_key' not specified")

    def test_bad_uploads_are_400(self):
        for name, result, needles in [
                ("no file", self.upload({"target_lang": "DE"}, {}), ["'file' not specified"]),
                ("no target_lang", self.upload({}, {"file": ("a.txt", b"a")}),
                 ["'target_lang' not specified"]),
                ("output_format another format",
                 self.upload({"target_lang": "DE", "output_format": "pdf"},
                             {"file": ("a.txt", b"a")}), ["output_format", "txt"]),
                ("formality more",
                 self.upload({"target_lang": "DE", "formality": "more"},
                             {"file": ("a.txt", b"a")}), ["formality"]),
                ("a format mtserve does not translate",
                 self.upload({"target_lang": "DE"}, {"file": ("a.pdf", b"%PDF-1.4")}), ["file"]),
                ("not multipart", post_form(self.port, "/v2/document", {"target_lang": "DE"}),
                 ["multipart/form-data"])]:
            with self.subTest(name):
                self.assertDeepLError(result, 400, *needles)


class GlossaryTest(DeepLTestCase):
    """The v2 glossary routes: made, read, listed, used, deleted."""

    server_flags = FLAGS

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.server.http_port

    def create(self, **fields):
        return post_form(self.port, "/v2/glossaries",
                         {"name": "bikes", "source_lang": "en", "target_lang": "de",
                          "entries": "bike\tVelo\nman\tHerr", **fields})

    def test_a_glossary_made_read_listed_and_deleted(self):
        result = self.create()
        self.assertEqual(result[0], 201, result[2][:300])
        info = parse(result)
        self.assertEqual({k: info[k] for k in ("name", "ready", "source_lang", "target_lang",
                                               "entry_count")},
                         {"name": "bikes", "ready": True, "source_lang": "en",
                          "target_lang": "de", "entry_count": 2})
        self.assertRegex(info["creation_time"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        glossary = info["glossary_id"]
        self.assertAnswer(call(self.port, "GET", f"/v2/glossaries/{glossary}"), info)
        listed = parse(call(self.port, "GET", "/v2/glossaries"))
        self.assertIn(info, listed["glossaries"])
        entries = call(self.port, "GET", f"/v2/glossaries/{glossary}/entries",
                       headers={"Accept": "text/tab-separated-values"})
        self.assertEqual(entries[0], 200, entries[2][:300])
        self.assertTrue(entries[1]["Content-Type"].startswith("text/tab-separated-values"))
        self.assertEqual(entries[2].decode().splitlines(), ["bike\tVelo", "man\tHerr"])
        self.assertEqual(call(self.port, "GET", f"/v2/glossaries/{glossary}/entries",
                              headers={"Accept": "text/csv"})[0], 415)
        deleted = call(self.port, "DELETE", f"/v2/glossaries/{glossary}")
        self.assertEqual((deleted[0], deleted[2]), (204, b""))
        self.assertDeepLError(call(self.port, "GET", f"/v2/glossaries/{glossary}"), 404)

    def test_csv_entries_in_json(self):
        result = post_json(self.port, "/v2/glossaries",
                           {"name": "csv", "source_lang": "EN", "target_lang": "DE",
                            "entries": "bike,Velo\n\"the man\",Herr\n", "entries_format": "csv"})
        self.assertEqual(result[0], 201, result[2][:300])
        self.assertEqual(parse(result)["entry_count"], 2)
        call(self.port, "DELETE", f"/v2/glossaries/{parse(result)['glossary_id']}")

    def test_translating_with_a_glossary_uses_its_terms(self):
        info = parse(self.create())
        sentence = "A man is riding a bike."
        self.assertNotIn("Velo", native(self.port, [sentence])[0])
        result = post_json(self.port, "/v2/translate",
                           {"text": [sentence], "source_lang": "EN", "target_lang": "DE",
                            "glossary_id": info["glossary_id"]})
        self.assertIn("Velo", self.translations(result)[0])
        call(self.port, "DELETE", f"/v2/glossaries/{info['glossary_id']}")

    def test_bad_glossaries_are_400(self):
        for name, result, needles in [
                ("a source listed twice", self.create(entries="bike\tVelo\nbike\tRad"),
                 ["\"bike\" more than once"]),
                ("the same entry twice", self.create(entries="bike\tVelo\nbike\tVelo"),
                 ["more than once"]),
                ("no name", self.create(name=""), ["'name' not specified"]),
                ("no entries", self.create(entries=""), ["'entries' not specified"]),
                ("entries_format", self.create(entries_format="xlsx"), ["tsv or csv"]),
                ("a line of one field", self.create(entries="bike"), ["entries", "line 1"])]:
            with self.subTest(name):
                self.assertDeepLError(result, 400, *needles)


KEYS = {name: f"{name}-{os.urandom(16).hex()}" for name in ("alice", "wordy", "paced")}


def key_line(name, limits=""):
    return f"{name} sha256:{hashlib.sha256(KEYS[name].encode()).hexdigest()} {limits}\n"


class KeysTest(DeepLTestCase):
    """--api_keys_file: DeepL-Auth-Key and auth_key, 403, /v2/usage, 456 and 429."""

    @classmethod
    def setUpClass(cls):
        keys = os.path.join(cls.class_temp_dir(), "keys")
        with open(keys, "w") as f:
            f.write(key_line("alice") + key_line("wordy", "characters_per_day=40") +
                    key_line("paced", "requests_per_minute=2"))
        cls.server_flags = (*FLAGS, f"--api_keys_file={keys}")
        super().setUpClass()
        cls.port = cls.server.http_port

    def translate(self, text, key=None, **fields):
        headers = {"Authorization": f"DeepL-Auth-Key {key}"} if key else {}
        return post_form(self.port, "/v2/translate",
                         {"text": text, "target_lang": "DE", **fields}, headers)

    def test_a_missing_or_unknown_key_is_403(self):
        with self.subTest("none"):
            self.assertDeepLError(self.translate("a"), 403, "DeepL-Auth-Key")
        with self.subTest("unknown, in the header"):
            self.assertDeepLError(self.translate("a", key="nope"), 403)
        with self.subTest("unknown, as auth_key"):
            self.assertDeepLError(self.translate("a", auth_key="nope"), 403)
        with self.subTest("languages need one too"):
            self.assertDeepLError(call(self.port, "GET", "/v2/languages"), 403)

    def test_a_good_key_in_the_header_or_as_auth_key(self):
        want = native_with_key(self.port, SENTENCES[0], KEYS["alice"])
        with self.subTest("DeepL-Auth-Key"):
            self.assertEqual(self.translations(self.translate(SENTENCES[0], key=KEYS["alice"])),
                             [want])
        with self.subTest("auth_key"):
            self.assertEqual(
                self.translations(self.translate(SENTENCES[0], auth_key=KEYS["alice"])), [want])

    def test_usage_counts_the_keys_characters_and_456_past_its_limit(self):
        usage = call(self.port, "GET", "/v2/usage",
                     headers={"Authorization": f"DeepL-Auth-Key {KEYS['wordy']}"})
        self.assertAnswer(usage, {"character_count": 0, "character_limit": 40})
        text = "A man is riding a bike."  # 23 characters.
        self.assertEqual(self.translate(text, key=KEYS["wordy"])[0], 200)
        usage = call(self.port, "GET", "/v2/usage",
                     headers={"Authorization": f"DeepL-Auth-Key {KEYS['wordy']}"})
        self.assertAnswer(usage, {"character_count": 23, "character_limit": 40})
        self.assertDeepLError(self.translate(text, key=KEYS["wordy"]), 456, "characters today",
                              "40")

    def test_requests_per_minute_is_429(self):
        answers = [self.translate("a", key=KEYS["paced"]) for _ in range(3)]
        self.assertEqual([a[0] for a in answers[:2]], [200, 200])
        self.assertDeepLError(answers[2], 429, "requests per minute")
        self.assertTrue(answers[2][1].get("Retry-After"))


def native_with_key(port, text, key):
    status, _, body = call(port, "POST", "/v1/translate", {"texts": [text]},
                           {"Authorization": f"Bearer {key}"})
    if status != 200:
        raise RuntimeError(f"/v1/translate: {status} {body[:300]!r}")
    return json.loads(body)["translations"][0]["hypotheses"][0]["text"]


class QueueFullTest(DeepLTestCase):
    def test_a_full_queue_is_429(self):
        server = self.start_mtserve("--workers=1", "--max_texts_per_request=8",
                                    "--max_queued_texts=16", "--max_batch_size=1",
                                    "--cache_bytes=0")
        full = e2e_suite.answer_while_queue_full(
            server, ALL_SENTENCES,
            lambda: post_json(server.http_port, "/v2/translate",
                              {"text": [ALL_SENTENCES[0]], "target_lang": "DE"}))
        self.assertDeepLError(full, 429, "queue")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "node_test_dir", "npm_dir", "multi30k_text")
