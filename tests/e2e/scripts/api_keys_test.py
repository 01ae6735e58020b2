#!/usr/bin/env python3
"""API keys and their limits on a real mtserve (--api_keys_file), over gRPC and HTTP.

- Translate, TranslateStream, ListModels, /v1/translate, /v1/translate:stream, /v1/models and
  LibreTranslate's /translate need a key: none or an unknown one is UNAUTHENTICATED (HTTP 401;
  LibreTranslate's 403 {"error"}); health, readiness, /openapi.json, /languages and
  /frontend/settings stay open. The key goes as "authorization: Bearer KEY", "x-api-key: KEY" or
  LibreTranslate's api_key field.
- Over requests_per_minute or characters_per_day: RESOURCE_EXHAUSTED (HTTP 429) saying when to
  retry, with gRPC trailing metadata retry-after and HTTP's Retry-After header; a request longer
  than a whole day's characters is INVALID_ARGUMENT.
- mtserve_api_key_requests_total counts calls by key name (none, unknown for the others).
- The keys file is re-read on SIGHUP and when it changes; a broken file keeps the previous keys
  and is logged. No key ever appears in the log or the metrics.

Usage: api_keys_test.py BIN_DIR STUBS_DIR [-- UNITTEST_ARGS]
"""
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary, call  # noqa: E402
from mtserve_process import wait_until  # noqa: E402

TEXT = "A man is riding a bike."  # 23 characters.
KEYS = {name: f"{name}-{os.urandom(16).hex()}" for name in
        ("alice", "limited", "paced", "wordy", "brief", "dave")}
LIBRETRANSLATE_FORM = {"q": TEXT, "source": "en", "target": "de"}


def key_line(name, limits=""):
    digest = hashlib.sha256(KEYS[name].encode()).hexdigest()
    return f"{name} sha256:{digest} {limits}\n"


def write_keys(path, text):
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


def translate_http(port, headers=None):
    return call(port, "POST", "/v1/translate", json.dumps({"texts": [TEXT]}),
                {"Content-Type": "application/json", **(headers or {})})


def libretranslate(port, fields, headers=None):
    return call(port, "POST", "/translate", json.dumps({**LIBRETRANSLATE_FORM, **fields}),
                {"Content-Type": "application/json", **(headers or {})})


def bearer(name):
    return {"Authorization": f"Bearer {KEYS[name]}"}


def grpc_bearer(name):
    return [("authorization", f"Bearer {KEYS[name]}")]


def key_counts(metrics):
    """mtserve_api_key_requests_total by (key name, code)."""
    counts = {}
    for line in metrics.splitlines():
        match = re.match(r'mtserve_api_key_requests_total\{code="(\w+)",key="([\w.-]+)"\} (\S+)',
                         line)
        if match:
            counts[(match.group(2), match.group(1))] = float(match.group(3))
    return counts


class KeysTestCase(e2e_suite.MtserveTestCase):
    """A class's mtserve with the keys file `keys` (its text) re-read every second, and a gRPC
    stub on it."""

    keys = ""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, e2e_suite.ARGS.stubs_dir)
        global grpc, pb, pb_grpc
        import grpc
        from mtserve.v1 import translation_pb2 as pb
        from mtserve.v1 import translation_pb2_grpc as pb_grpc
        cls.keys_path = os.path.join(cls.class_temp_dir(), "keys.txt")
        write_keys(cls.keys_path, cls.keys)
        cls.server_flags = ("--workers=1", f"--api_keys_file={cls.keys_path}",
                            "--reload_interval=1s")
        super().setUpClass()
        cls.http_port = cls.server.http_port
        cls.stub = cls.translator_stub()
        cls.request = pb.TranslateRequest(texts=[TEXT.encode()])

    def grpc_code(self, method, *args, metadata=None):
        """(status code, the grpc.RpcError or None) of a unary call."""
        try:
            method(*args, timeout=60, metadata=metadata)
            return grpc.StatusCode.OK, None
        except grpc.RpcError as e:
            return e.code(), e

    def translate_grpc(self, metadata=None):
        return self.grpc_code(self.stub.Translate, self.request, metadata=metadata)

    def stream_code(self, metadata=None):
        """(status code, the answers or the grpc.RpcError) of a TranslateStream of one text."""
        try:
            answers = list(self.stub.TranslateStream(
                iter([pb.TranslateStreamRequest(id="1", text=TEXT.encode())]),
                timeout=60, metadata=metadata))
            return grpc.StatusCode.OK, answers
        except grpc.RpcError as e:
            return e.code(), e


class AuthenticationTest(KeysTestCase):
    """Which calls need a key, and the ways a key is given."""

    keys = "# test keys\n" + key_line("alice")

    def test_grpc_translate_needs_a_key(self):
        with self.subTest("no key"):
            code, error = self.translate_grpc()
            self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
            self.assertIn("API key is required", error.details())
        with self.subTest("unknown key"):
            code, _ = self.translate_grpc([("authorization", "Bearer not-a-key")])
            self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        with self.subTest("Bearer key"):
            code, error = self.translate_grpc(grpc_bearer("alice"))
            self.assertEqual(code, grpc.StatusCode.OK, error)
        with self.subTest("x-api-key"):
            code, error = self.translate_grpc([("x-api-key", KEYS["alice"])])
            self.assertEqual(code, grpc.StatusCode.OK, error)

    def test_grpc_list_models_needs_a_key(self):
        with self.subTest("no key"):
            code, _ = self.grpc_code(self.stub.ListModels, pb.ListModelsRequest())
            self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        with self.subTest("a key"):
            code, error = self.grpc_code(self.stub.ListModels, pb.ListModelsRequest(),
                                         metadata=grpc_bearer("alice"))
            self.assertEqual(code, grpc.StatusCode.OK, error)

    def test_grpc_stream_needs_a_key(self):
        with self.subTest("no key"):
            code, _ = self.stream_code()
            self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        with self.subTest("a key"):
            code, answers = self.stream_code(grpc_bearer("alice"))
            self.assertEqual(code, grpc.StatusCode.OK, answers)
            self.assertTrue(answers[0].HasField("translation"), answers)

    def test_grpc_health_needs_no_key(self):
        health = subprocess.run([binary("mtclient"), "health",
                                 f"--server=127.0.0.1:{self.server.grpc_port}"],
                                capture_output=True, text=True, timeout=60)
        self.assertEqual(health.returncode, 0, health.stdout + health.stderr)

    def test_http_translate_needs_a_key(self):
        with self.subTest("no key"):
            result = translate_http(self.http_port)
            self.assertErrorAnswer(result, 401, "UNAUTHENTICATED")
            self.assertEqual(result[1].get("WWW-Authenticate"), "Bearer",
                             f"the 401's WWW-Authenticate; its headers: {result[1].items()}")
        with self.subTest("unknown key"):
            self.assertErrorAnswer(translate_http(self.http_port, {"Authorization": "Bearer wrong"}),
                                   401, "UNAUTHENTICATED")
        with self.subTest("Bearer key"):
            status, _, body = translate_http(self.http_port, bearer("alice"))
            self.assertEqual(status, 200, body)
        with self.subTest("X-API-Key"):
            status, _, body = translate_http(self.http_port, {"X-API-Key": KEYS["alice"]})
            self.assertEqual(status, 200, body)

    def test_http_models_needs_a_key(self):
        with self.subTest("no key"):
            self.assertErrorAnswer(call(self.http_port, "GET", "/v1/models"), 401,
                                   "UNAUTHENTICATED")
        with self.subTest("a key"):
            status, _, body = call(self.http_port, "GET", "/v1/models", headers=bearer("alice"))
            self.assertEqual(status, 200, body)

    def test_http_stream_needs_a_key(self):
        stream_body = json.dumps({"id": "1", "text": TEXT}) + "\n"
        with self.subTest("no key"):
            self.assertErrorAnswer(call(self.http_port, "POST", "/v1/translate:stream",
                                        stream_body), 401, "UNAUTHENTICATED")
        with self.subTest("a key"):
            status, _, body = call(self.http_port, "POST", "/v1/translate:stream", stream_body,
                                   bearer("alice"))
            self.assertEqual(status, 200, body)
            self.assertIn(b'"translation"', body)

    def test_open_paths_need_no_key(self):
        for path in ("/healthz", "/readyz", "/openapi.json", "/languages", "/frontend/settings"):
            with self.subTest(path):
                status, _, body = call(self.http_port, "GET", path)
                self.assertEqual(status, 200, body[:400])

    def test_libretranslate_takes_the_api_key_field(self):
        with self.subTest("JSON"):
            status, _, body = libretranslate(self.http_port, {"api_key": KEYS["alice"]})
            self.assertEqual(status, 200, body)
            self.assertIn("translatedText", json.loads(body))
        with self.subTest("form"):
            status, _, body = call(
                self.http_port, "POST", "/translate",
                urllib.parse.urlencode({**LIBRETRANSLATE_FORM, "api_key": KEYS["alice"]}),
                {"Content-Type": "application/x-www-form-urlencoded"})
            self.assertEqual(status, 200, body)
        with self.subTest("a Bearer header"):
            status, _, body = libretranslate(self.http_port, {}, bearer("alice"))
            self.assertEqual(status, 200, body)

    def test_libretranslate_refuses_with_403(self):
        for extra in ({}, {"api_key": "wrong"}):
            with self.subTest(extra or "no key"):
                status, _, body = libretranslate(self.http_port, extra)
                self.assertEqual(status, 403, body)
                self.assertEqual(list(json.loads(body)), ["error"], body)

    def test_frontend_settings_say_keys_are_required(self):
        settings = json.loads(call(self.http_port, "GET", "/frontend/settings")[2])
        self.assertIs(settings["apiKeys"], True, settings)
        self.assertIs(settings["keyRequired"], True, settings)

    def test_no_key_appears_in_the_log_or_the_metrics(self):
        """Every way of giving a key, good and unknown, then the log and a scrape."""
        unknown = f"unknown-{os.urandom(16).hex()}"
        for key in (KEYS["alice"], unknown):
            self.translate_grpc([("authorization", f"Bearer {key}")])
            self.translate_grpc([("x-api-key", key)])
            translate_http(self.http_port, {"Authorization": f"Bearer {key}"})
            translate_http(self.http_port, {"X-API-Key": key})
            libretranslate(self.http_port, {"api_key": key})
        log, metrics = self.server.stderr(), self.server.metrics()
        for key in (KEYS["alice"], unknown):
            self.assertFalse(key in log, f"the key {key} appears in the log")
            self.assertFalse(key in metrics, f"the key {key} appears in the metrics")


class LimitsTest(KeysTestCase):
    """Requests per minute and characters per day: each test uses up a key of its own."""

    keys = (key_line("limited", "requests_per_minute=2") +
            key_line("paced", "requests_per_minute=2") +
            key_line("wordy", "characters_per_day=30") + key_line("brief", "characters_per_day=30"))

    def test_grpc_requests_per_minute(self):
        codes = [self.translate_grpc(grpc_bearer("limited")) for _ in range(3)]
        self.assertEqual([c for c, _ in codes[:2]], [grpc.StatusCode.OK] * 2,
                         "requests within the per-minute limit pass")
        code, error = codes[2]
        self.assertEqual(code, grpc.StatusCode.RESOURCE_EXHAUSTED, error)
        retry = dict(error.trailing_metadata() or ()).get("retry-after")
        detail = f"retry-after {retry}, {error.details()!r}"
        self.assertIn("2 requests per minute", error.details(), detail)
        self.assertIsNotNone(retry, detail)
        self.assertTrue(1 <= int(retry) <= 30, detail)
        self.assertIn(f"retry in {retry} s", error.details(), detail)

    def test_http_requests_per_minute(self):
        statuses = [translate_http(self.http_port, bearer("paced"))[0] for _ in range(2)]
        self.assertEqual(statuses, [200, 200], "requests within the per-minute limit pass")
        result = translate_http(self.http_port, bearer("paced"))
        self.assertErrorAnswer(result, 429, "RESOURCE_EXHAUSTED", "2 requests per minute")
        retry = result[1].get("Retry-After")
        self.assertIsNotNone(retry)
        self.assertTrue(1 <= int(retry) <= 30, f"Retry-After {retry}")

    def test_http_characters_per_day(self):
        """Characters per day (30): 23 pass, 23 more are over until midnight UTC."""
        wordy = {"X-API-Key": KEYS["wordy"]}
        status, _, body = translate_http(self.http_port, wordy)
        self.assertEqual(status, 200, body)
        result = translate_http(self.http_port, wordy)
        seconds_to_midnight = 86400 - int(time.time()) % 86400
        self.assertErrorAnswer(result, 429, "RESOURCE_EXHAUSTED",
                               "has used 23 of its 30 characters today")
        retry = result[1].get("Retry-After", -1)
        self.assertLessEqual(abs(int(retry) - seconds_to_midnight), 60,
                             f"Retry-After {retry}, {seconds_to_midnight} s to midnight UTC")

    def test_http_more_characters_than_a_day_allows(self):
        self.assertErrorAnswer(
            call(self.http_port, "POST", "/v1/translate", json.dumps({"texts": ["x" * 31]}),
                 {"X-API-Key": KEYS["brief"]}),
            400, "INVALID_ARGUMENT", "may send 30 a day")


class MetricsTest(KeysTestCase):
    """mtserve_api_key_requests_total on a server of its own: exactly this test's calls."""

    keys = key_line("alice") + key_line("limited", "requests_per_minute=2")

    def test_calls_counted_by_key_name(self):
        for _ in range(3):
            self.translate_grpc(grpc_bearer("limited"))
        translate_http(self.http_port, bearer("limited"))
        # Five calls without a key, three with unknown ones.
        self.translate_grpc()
        self.grpc_code(self.stub.ListModels, pb.ListModelsRequest())
        translate_http(self.http_port)
        call(self.http_port, "GET", "/v1/models")
        libretranslate(self.http_port, {})
        self.translate_grpc([("authorization", "Bearer not-a-key")])
        translate_http(self.http_port, {"Authorization": "Bearer wrong"})
        libretranslate(self.http_port, {"api_key": "wrong"})
        counts = key_counts(self.server.metrics())
        self.assertEqual(counts, {("limited", "OK"): 2, ("limited", "RESOURCE_EXHAUSTED"): 2,
                                  ("none", "UNAUTHENTICATED"): 5,
                                  ("unknown", "UNAUTHENTICATED"): 3})


class ReloadTest(KeysTestCase):
    """The keys file re-read on SIGHUP and by polling, and a broken file: in order, on a server
    of its own."""

    keys = key_line("alice")

    def dave_works(self):
        return self.translate_grpc([("x-api-key", KEYS["dave"])])[0] == grpc.StatusCode.OK

    def test_sighup_broken_file_and_polling(self):
        code, _ = self.translate_grpc([("x-api-key", KEYS["dave"])])
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED, "dave is not a key yet")
        write_keys(self.keys_path, key_line("alice") + key_line("dave"))
        self.server.process.send_signal(signal.SIGHUP)
        self.assertTrue(wait_until(self.dave_works),
                        "a key added to the file does not work after SIGHUP:\n" +
                        self.server.stderr()[-2000:])
        write_keys(self.keys_path, key_line("alice") + "dave sha256:123\n")
        self.server.process.send_signal(signal.SIGHUP)
        self.assertTrue(wait_until(lambda: "line 2: the key of \"dave\" is not sha256:" in
                                   self.server.stderr()),
                        "a broken keys file is not logged with its line:\n" +
                        self.server.stderr()[-2000:])
        self.assertTrue(self.dave_works(), "a broken keys file does not keep the previous keys")
        write_keys(self.keys_path, key_line("alice"))  # No signal: polling.
        self.assertTrue(wait_until(lambda: not self.dave_works()),
                        "a key removed from the file still works (polling)")
        log, metrics = self.server.stderr(), self.server.metrics()
        for key in (KEYS["alice"], KEYS["dave"]):
            self.assertFalse(key in log, f"the key {key} appears in the log")
            self.assertFalse(key in metrics, f"the key {key} appears in the metrics")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
