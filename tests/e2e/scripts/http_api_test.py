#!/usr/bin/env python3
"""The HTTP/JSON API of a real mtserve, with the Python standard library as the client.

- /v1/translate answers what gRPC (mtclient, on the same server) answers for the same texts;
  keep-alive carries several requests on one connection.
- /v1/models lists the model; /healthz and /readyz answer 200.
- /v1/translate:stream answers one NDJSON line per text, each with its id; a failing text gets
  an error line and the others still come.
- Errors are JSON {"code", "message"} with the HTTP status of the gRPC code: bad JSON 400 (a
  boolean given as a string or a number too, naming the field), unknown model 404, over a limit 400 naming the field and the limit, a body over the limit 413,
  a deadline (X-Request-Timeout) 504, an unknown path 404, a wrong method 405 with Allow.
- `Expect: 100-continue` (curl sends it for bodies over 1 MiB and for streamed ones) gets
  "100 Continue", then the whole answer.
- HTTP requests are counted in mtserve_requests_total with frontend="http", gRPC ones with
  frontend="grpc", and no other value.
- Slow clients: two connections that send their headers a byte at a time (as many as the
  handler threads, which once held a thread each) are cut off by --http_timeout, and a request
  made meanwhile is answered; a body that stops arriving gets 408.
- SIGTERM with a translation in flight: /readyz goes 503, new requests get 503 (UNAVAILABLE),
  /healthz stays 200, the translation in flight is answered in full, and mtserve exits 0.

Usage: http_api_test.py BIN_DIR MULTI30K_TEXT [-- UNITTEST ARGUMENTS]
"""
import http.client
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call, first_translation, requests_total  # noqa: E402

FLAGS = ["--workers=1", "--http_threads=2", "--http_timeout=1s", "--max_message_bytes=65536",
         "--max_text_bytes=4096", "--max_texts_per_request=8"]
SENTENCES = []


def setUpModule():
    SENTENCES.extend(e2e_suite.nonblank_lines(e2e_suite.ARGS.multi30k_text))


def call_with_continue(port, path, body):
    """(interim head, final head, final body) of a POST that waits for 100 Continue before
    sending its body, as curl does. The server closes the connection after such an answer."""
    body = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as connection:
        connection.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                           f"Content-Type: application/json\r\nExpect: 100-continue\r\n"
                           f"Content-Length: {len(body)}\r\n\r\n".encode())
        received = connection.recv(4096)
        connection.sendall(body)
        while chunk := connection.recv(65536):
            received += chunk
    interim, _, rest = received.partition(b"\r\n\r\n")
    head, _, answer = rest.partition(b"\r\n\r\n")
    return interim.decode(), head.decode(), answer


def grpc_translations(server, lines, *flags):
    """mtclient's translations of `lines` over gRPC, on the same server."""
    out = subprocess.run([e2e_suite.binary("mtclient"), "translate",
                          f"--server=127.0.0.1:{server.grpc_port}", *flags],
                         input="\n".join(lines) + "\n", capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"mtclient failed: {out.stderr}")
    return out.stdout.splitlines()


def slow_client(port, sent, closed):
    """Sends a request's headers a byte every 0.1 s, for at most 60 s; sets `closed` if the
    server closes the connection first."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        sent.set()
        end = time.monotonic() + 60
        try:
            while time.monotonic() < end:
                sock.sendall(b"a")
                time.sleep(0.1)
                sock.setblocking(False)
                try:
                    if sock.recv(4096) == b"":
                        closed.set()
                        return
                except BlockingIOError:
                    pass
                finally:
                    sock.setblocking(True)
        except (ConnectionResetError, BrokenPipeError):
            closed.set()


def read_to_end(sock):
    answer = b""
    while chunk := sock.recv(4096):
        answer += chunk
    return answer


class ApiTest(e2e_suite.MtserveTestCase):
    """The API on one server; `expected`: mtclient's gRPC translations (beam 4) of `lines`."""

    server_flags = FLAGS

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.port = cls.server.http_port
        cls.lines = SENTENCES[:3]
        cls.expected = grpc_translations(cls.server, cls.lines, "--beam_size=4")

    def test_health_and_readiness_answer_200(self):
        status, _, body = call(self.port, "GET", "/healthz")
        self.assertEqual(status, 200, body)
        status, _, body = call(self.port, "GET", "/readyz")
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["status"], "SERVING", body)

    def test_translate_answers_what_grpc_answers(self):
        status, headers, body = call(self.port, "POST", "/v1/translate",
                                     {"texts": self.lines, "options": {"beam_size": 4}})
        self.assertEqual(status, 200, body[:400])
        answer = json.loads(body)
        self.assertEqual([t["hypotheses"][0]["text"] for t in answer["translations"]],
                         self.expected, "HTTP's translations, gRPC's")
        self.assertEqual(headers.get("Content-Type"), "application/json")
        self.assertTrue(answer.get("model"), f"the model's name: {body[:400]!r}")

    def test_a_paragraph_is_split_into_sentences_as_over_grpc(self):
        status, _, body = call(self.port, "POST", "/v1/translate",
                               {"texts": [" ".join(self.lines)],
                                "options": {"beamSize": 4, "return_scores": True}})
        self.assertEqual(status, 200, body[:600])
        translation = json.loads(body)["translations"][0]
        hypothesis = translation["hypotheses"][0]
        self.assertEqual(hypothesis["text"], " ".join(self.expected))
        self.assertEqual(len(translation["sentences"]), 3, body[:600])
        self.assertIn("score", hypothesis)
        self.assertTrue(hypothesis.get("token_log_probs"), body[:600])

    def test_keep_alive_requests_share_a_connection(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        self.addCleanup(connection.close)
        statuses, sockets = [], set()
        for _ in range(3):
            connection.request("POST", "/v1/translate",
                               body=json.dumps({"texts": self.lines[:1]}))
            response = connection.getresponse()
            response.read()
            statuses.append(response.status)
            sockets.add(id(connection.sock))
        self.assertEqual(statuses, [200] * 3)
        self.assertEqual(len(sockets), 1, "one socket for the three requests")

    def test_models_lists_the_default_model_with_the_limits_the_server_was_started_with(self):
        status, _, body = call(self.port, "POST", "/v1/translate", {"texts": self.lines[:1]})
        self.assertEqual(status, 200, body[:400])
        translated_by = json.loads(body)["model"]
        status, _, body = call(self.port, "GET", "/v1/models")
        self.assertEqual(status, 200, body[:400])
        answer = json.loads(body)
        models = answer["models"]
        self.assertEqual(len(models), 1, body[:400])
        self.assertIs(models[0].get("is_default"), True, body[:400])
        self.assertEqual(models[0].get("name"), translated_by, "the model that translates")
        self.assertGreater(models[0].get("max_input_tokens", 0), 0, body[:400])
        self.assertEqual(answer.get("limits"),
                         {"max_texts_per_request": 8, "max_text_bytes": 4096, "max_beam_size": 16,
                          "max_sampling_topk": 1000,
                          # --max_file_bytes' default, 10 MiB (a 64-bit integer: a string).
                          "max_file_bytes": str(10 << 20)})

    def test_stream_answers_a_line_per_text_and_an_error_line_for_a_failing_one(self):
        stream = "\n".join(
            [json.dumps({"id": str(i), "text": t, "options": {"beam_size": 4}})
             for i, t in enumerate(self.lines)]
            + [json.dumps({"id": "bad", "text": "x", "model": "no-such-model"})]) + "\n"
        status, headers, body = call(self.port, "POST", "/v1/translate:stream", stream)
        self.assertEqual(status, 200, body[:600])
        self.assertEqual(headers.get("Content-Type"), "application/x-ndjson")
        answers = [json.loads(line) for line in body.decode().splitlines()]
        by_id = {a.get("id"): a for a in answers}
        self.assertEqual(len(answers), 4, body[:600])
        self.assertEqual(set(by_id), {"0", "1", "2", "bad"})
        for i in range(3):
            self.assertEqual(by_id[str(i)]["translation"]["hypotheses"][0]["text"],
                             self.expected[i], f"line {i}'s translation")
        bad = by_id["bad"].get("error", {})
        self.assertEqual(bad.get("code"), 5, f"NOT_FOUND: {bad}")
        self.assertIn("no-such-model", bad.get("message", ""))

    def test_bodies_that_are_not_the_request_are_invalid_argument(self):
        for name, path, body, needles in [
                ("bad JSON", "/v1/translate", '{"texts": ["a"',
                 ["the request body is not JSON"]),
                ("a misspelt field", "/v1/translate", {"texts": ["a"], "options": {"beam": 2}},
                 ["mtserve.v1.TranslateRequest", "beam"]),
                ("a null among the texts (was dropped: two translations for three texts)",
                 "/v1/translate", '{"texts": ["a", null, "b"]}',
                 ["the request body: texts[1] is null"]),
                ("a boolean as a string (protobuf's parser takes \"true\")", "/v1/translate",
                 {"texts": ["a"], "options": {"return_scores": "true"}},
                 ['the request body: options.return_scores must be a boolean (true or false), '
                  'not "true"']),
                ("a stream line's boolean as a number", "/v1/translate:stream",
                 '{"id": "a", "text": "x"}\n{"text": "y", "options": {"shortlist": 0}}\n',
                 ["line 2 of the request body: options.shortlist must be a boolean"]),
                ("a stream line that is not JSON", "/v1/translate:stream",
                 '{"id": "a", "text": "x"}\n{oops\n',
                 ["line 2 of the request body is not JSON"])]:
            with self.subTest(name):
                self.assertErrorAnswer(call(self.port, "POST", path, body), 400,
                                       "INVALID_ARGUMENT", *needles)

    def test_an_unknown_model_is_not_found(self):
        self.assertErrorAnswer(
            call(self.port, "POST", "/v1/translate", {"model": "no-such-model", "texts": ["a"]}),
            404, "NOT_FOUND", "no-such-model", "is not served")

    def test_over_a_limit_is_refused_naming_the_field_and_the_limit(self):
        for name, path, body, status, code, needles in [
                ("too many texts", "/v1/translate", {"texts": ["a"] * 9}, 400,
                 "INVALID_ARGUMENT", ["texts has 9 entries; the limit is 8",
                                      "--max_texts_per_request"]),
                ("a text over --max_text_bytes", "/v1/translate",
                 {"texts": ["a", "b" * 5000]}, 400, "INVALID_ARGUMENT",
                 ["texts[1]", "--max_text_bytes"]),
                ("beam_size over the limit", "/v1/translate",
                 {"texts": ["a"], "options": {"beam_size": 20}}, 400, "INVALID_ARGUMENT",
                 ["options.beam_size is 20; the limit is 16"]),
                ("a body over --max_message_bytes", "/v1/translate", {"texts": ["a " * 40000]},
                 413, "RESOURCE_EXHAUSTED", ["65536", "--max_message_bytes"]),
                ("HTML nested deeper than the limit", "/v1/translate",
                 {"texts": ["<div>" * 600 + "A dog."], "options": {"format": "TEXT_FORMAT_HTML"}},
                 400, "INVALID_ARGUMENT",
                 ["texts[0]: the HTML nests elements 600 deep; the limit is 512"]),
                ("an element with more attributes than the limit", "/v1/translate",
                 {"texts": ["<b" + "".join(f" a{i}" for i in range(300)) + ">A dog.</b>"],
                  "options": {"format": "TEXT_FORMAT_HTML"}}, 400, "INVALID_ARGUMENT",
                 ["texts[0]: the HTML has an element with 300 attributes (the tag at byte 0); "
                  "the limit is 256"]),
                # A value takes tens of bytes of memory whatever its text: a 4 MiB body of
                # "","",... took 130 MiB before the bound.
                ("more JSON values than the limit", "/v1/translate",
                 '{"texts": [' + ",".join(['""'] * 3000) + "]}", 400, "INVALID_ARGUMENT",
                 ["the request body is JSON of more than 2888 values, the limit (the server's "
                  "--max_texts_per_request (8), plus --max_request_terms (256) times 11, plus "
                  "64)"]),
                ("a stream line of more JSON values than the limit", "/v1/translate:stream",
                 '{"text": "a"}\n{"text": "a", "x": [' + ",".join(["1"] * 3000) + "]}\n", 400,
                 "INVALID_ARGUMENT", ["line 2 of the request body is JSON of more than 2888"])]:
            with self.subTest(name):
                self.assertErrorAnswer(call(self.port, "POST", path, body), status, code,
                                       *needles)

    def test_x_request_timeout_is_the_deadline(self):
        self.assertErrorAnswer(
            call(self.port, "POST", "/v1/translate", {"texts": self.lines},
                 headers={"X-Request-Timeout": "0s"}),
            504, "DEADLINE_EXCEEDED")
        status, _, body = call(self.port, "POST", "/v1/translate", {"texts": self.lines[:1]},
                               headers={"X-Request-Timeout": "60s"})
        self.assertEqual(status, 200, f"a deadline that does not pass: {body[:300]!r}")
        self.assertErrorAnswer(
            call(self.port, "POST", "/v1/translate", {"texts": ["a"]},
                 headers={"X-Request-Timeout": "soon"}),
            400, "INVALID_ARGUMENT", "X-Request-Timeout")

    def test_an_unknown_path_is_not_found_naming_the_routes(self):
        self.assertErrorAnswer(call(self.port, "GET", "/v9/nothing"), 404, "NOT_FOUND",
                               "/v1/translate")

    def test_a_wrong_method_is_405_with_allow(self):
        wrong = call(self.port, "GET", "/v1/translate")
        self.assertErrorAnswer(wrong, 405, "UNIMPLEMENTED", "POST")
        self.assertEqual(wrong[1].get("Allow"), "POST")

    def test_a_wrong_method_with_a_body_left_unread_closes_the_connection(self):
        refused = call(self.port, "POST", "/v1/models", {"texts": ["a"]})
        self.assertErrorAnswer(refused, 405, "UNIMPLEMENTED", "GET")
        self.assertEqual(refused[1].get("Connection", "").lower(), "close",
                         f"the unread body is no next request: {refused[1]}")

    def test_expect_100_continue_gets_100_then_the_whole_answer(self):
        interim, head, answer = call_with_continue(
            self.port, "/v1/translate", {"texts": self.lines[:1], "options": {"beam_size": 4}})
        self.assertEqual(interim, "HTTP/1.1 100 Continue")
        self.assertTrue(head.startswith("HTTP/1.1 200"), f"{head!r} {answer[:300]!r}")
        self.assertIn("Content-Type: application/json", head)
        self.assertEqual(json.loads(answer)["translations"][0]["hypotheses"][0]["text"],
                         self.expected[0])

    def test_slow_clients_are_cut_off_and_a_request_behind_them_is_answered(self):
        slow = []
        for _ in range(2):  # As many as --http_threads (a thread each, when connections held one).
            sent, closed = threading.Event(), threading.Event()
            thread = threading.Thread(target=slow_client, args=(self.port, sent, closed),
                                      daemon=True)
            thread.start()
            sent.wait(60)
            slow.append((thread, closed))
        status, _, body = call(self.port, "GET", "/v1/models", timeout=60)
        self.assertEqual(status, 200, f"a request behind two slow clients: {body[:200]!r}")
        for thread, _ in slow:
            thread.join(70)
        self.assertTrue(all(closed.is_set() for _, closed in slow),
                        "slow clients are cut off by --http_timeout")

    def test_a_body_that_stops_arriving_gets_408_and_the_connection_closes(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sock:
            sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                         b'{"texts": ')
            answer = read_to_end(sock)  # Ends once the server closes.
        self.assertTrue(answer.startswith(b"HTTP/1.1 408"), f"{answer[:300]!r}")
        self.assertIn(b"DEADLINE_EXCEEDED", answer)


class MetricsTest(e2e_suite.MtserveTestCase):
    def test_requests_are_counted_by_frontend(self):
        # On a server of its own: exactly this test's requests by frontend, method, model, code.
        server = self.start_mtserve(*FLAGS)
        port = server.http_port
        lines = SENTENCES[:3]
        grpc_translations(server, lines[:1])
        for _ in range(2):
            self.assertEqual(call(port, "POST", "/v1/translate", {"texts": lines[:1]})[0], 200)
        stream = "\n".join([json.dumps({"id": str(i), "text": t}) for i, t in enumerate(lines)]
                           + [json.dumps({"id": "bad", "text": "x", "model": "no-such-model"})])
        self.assertEqual(call(port, "POST", "/v1/translate:stream", stream + "\n")[0], 200)
        # Refused before a model is chosen: model "none".
        for body in ('{"texts": ["a"', {"texts": ["a"], "options": {"beam": 2}},
                     '{"texts": ["a", null, "b"]}'):
            self.assertEqual(call(port, "POST", "/v1/translate", body)[0], 400)
        self.assertEqual(call(port, "POST", "/v1/translate", {"texts": ["a " * 40000]})[0], 413)
        self.assertEqual(call(port, "POST", "/v1/translate", {"texts": lines},
                              headers={"X-Request-Timeout": "0s"})[0], 504)
        with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
            sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                         b'{"texts": ')
            self.assertTrue(read_to_end(sock).startswith(b"HTTP/1.1 408"))

        text = server.metrics()
        frontends = set(re.findall(r'^mtserve_requests_total\{[^}]*frontend="([^"]*)"', text,
                                   re.MULTILINE))
        self.assertEqual(frontends, {"grpc", "http"}, "the frontend label's values")
        self.assertEqual(requests_total(text, frontend="http", method="Translate", code="OK"), 2,
                         "HTTP translations")
        self.assertEqual(requests_total(text, frontend="http", method="TranslateStream",
                                        code="OK"), 3, "HTTP stream texts")
        self.assertEqual(requests_total(text, frontend="http", method="TranslateStream",
                                        code="NOT_FOUND"), 1, "the stream's failing text")
        self.assertEqual(requests_total(text, frontend="http", model="none",
                                        code="INVALID_ARGUMENT"), 3,
                         "refusals before a model (bad JSON, a misspelt field, a null)")
        self.assertEqual(requests_total(text, frontend="http", model="none",
                                        code="RESOURCE_EXHAUSTED"), 1, "the body over the limit")
        self.assertEqual(requests_total(text, frontend="http", code="DEADLINE_EXCEEDED"), 2,
                         "a deadline passed, a body that stopped arriving")
        self.assertEqual(requests_total(text, frontend="grpc", method="Translate", code="OK"), 1,
                         "gRPC translations")


class DrainTest(e2e_suite.MtserveTestCase):
    def test_sigterm_drains_answering_the_translation_in_flight(self):
        # A translation that takes a while on one worker: the whole file as one text.
        server = self.start_mtserve("--workers=1", "--http_timeout=60s", "--shutdown_grace=120s",
                                    "--cache_bytes=0")
        document = " ".join(SENTENCES[:400])
        translating = server.terminate_during(
            lambda: call(server.http_port, "POST", "/v1/translate", {"texts": [document]},
                         timeout=300))
        ready = call(server.http_port, "GET", "/readyz")
        live = call(server.http_port, "GET", "/healthz")
        refused = call(server.http_port, "POST", "/v1/translate", {"texts": ["a"]})
        self.assertEqual(ready[0], 503, f"draining: /readyz {ready[2]!r}")
        self.assertEqual(json.loads(ready[2])["status"], "NOT_SERVING")
        self.assertEqual(live[0], 200, f"draining: /healthz {live[2]!r}")
        self.assertErrorAnswer(refused, 503, "UNAVAILABLE", "shutting down")
        translating.join(300)
        answer = translating.result
        self.assertIsNotNone(answer, "the translation in flight got no answer")
        text = first_translation(answer)
        self.assertIsNotNone(text, f"the translation in flight: {answer[0]} {answer[2][:300]!r}")
        self.assertGreater(len(text), len(document) // 2, "answered in full")
        self.assertEqual(server.process.wait(timeout=120), 0, server.stderr())


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "multi30k_text")
