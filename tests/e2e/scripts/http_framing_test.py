#!/usr/bin/env python3
"""HTTP/1.1 framing of a real mtserve, over raw sockets (Python's socket and ssl): what a client
or a proxy in front may send, byte for byte.

- A chunked body is taken only when it ends with its last (zero-size) chunk: one that stops
  arriving gets 408 on /v1/translate and on /v1/translate:stream (never a 200 that leaves out a
  text), one whose framing is broken 400 naming the chunked framing; both close the connection.
  The same over TLS. A chunk extension (";name=value") is ignored, as RFC 9112 §7.1.1 allows:
  the body is translated. A chunked body in several chunks is translated, and the connection
  stays open for the next request.
- Framing two readers could take differently gets 400 naming the header, and the connection
  closes: two different Content-Length headers, Content-Length with Transfer-Encoding (chunked or
  identity). Every header field is read (a Content-Length after 100 others frames the body); a
  head over 16 KiB gets 431 and the connection closes.
- GET keeps the connection alive: pipelined GETs on one connection are answered in order, and a
  request sent after their answers is answered as itself (also over TLS).
- /healthz and /readyz take GET and HEAD only: POST and DELETE get 405 with "Allow: GET, HEAD".
- With --api_keys_file, a wrong key in a header is refused before the body is read: headers that
  announce a large body and send none get 401 (/v1/translate) or 403 (LibreTranslate's
  /translate), not the 408 of a body that never came. LibreTranslate's api_key in the body still
  works without a header key, and a request checked early is charged once.

Usage: http_framing_test.py BIN_DIR [-- UNITTEST ARGUMENTS]
"""
import hashlib
import json
import os
import socket
import ssl
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import first_translation, metric_total  # noqa: E402
from test_certificates import make_ca, make_certificate  # noqa: E402

# A short --http_timeout: a body that stops arriving is answered soon.
FLAGS = ["--workers=1", "--http_threads=4", "--http_timeout=1s"]
TEXT = "A man is riding a bike."
KEY = f"alice-{os.urandom(16).hex()}"


class Connection:
    """A raw HTTP/1.1 connection: bytes out, answers parsed one at a time."""

    def __init__(self, port, context=None):
        sock = socket.create_connection(("127.0.0.1", port), timeout=120)
        self.sock = context.wrap_socket(sock, server_hostname="127.0.0.1") if context else sock
        self.reader = self.sock.makefile("rb")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.reader.close()
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data.encode() if isinstance(data, str) else data)

    def answer(self):
        """(status, {lowercase header name: value}, body bytes) of the next answer; None if the
        server closed the connection instead."""
        line = self.reader.readline()
        if not line:
            return None
        status = int(line.split()[1])
        headers = {}
        while (line := self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while size := int(self.reader.readline().split(b";")[0], 16):
                body += self.reader.read(size)
                self.reader.readline()
            self.reader.readline()
        else:
            body = self.reader.read(int(headers.get("content-length", "0")))
        return status, headers, body

    def closed(self):
        """True once the server closes the connection (no further answer comes)."""
        try:
            return self.reader.read() == b""
        except (ConnectionResetError, ssl.SSLError):
            return True


def head(method, path, *fields):
    return "".join([f"{method} {path} HTTP/1.1\r\n", "Host: 127.0.0.1\r\n",
                    *(f"{field}\r\n" for field in fields), "\r\n"])


def chunk(data):
    data = data.encode() if isinstance(data, str) else data
    return b"%x\r\n%s\r\n" % (len(data), data)


def translate_body(text=TEXT):
    return json.dumps({"texts": [text]})


def stream_body(*texts):
    return "".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(texts))


def error_of(answer):
    """(status, JSON error code, message) of an answer ("" where it has none)."""
    if answer is None:
        return None, "", "(the connection closed with no answer)"
    try:
        error = json.loads(answer[2])
    except ValueError:
        error = {}
    if not isinstance(error, dict):
        error = {}
    return answer[0], error.get("code", ""), error.get("message", error.get("error", ""))


class FramingTestCase(e2e_suite.MtserveTestCase):
    """Raw connections to the class's server (TLS ones when `context` is set)."""

    context = None

    def connect(self):
        return Connection(self.server.http_port, self.context)

    def assertErrorThenClosed(self, connection, answer, status, code, *needles):
        """An error answer with this status, JSON code and words in its message, after which
        the server closes the connection."""
        got = error_of(answer)
        if not (got[0] == status and got[1] == code and all(n in got[2] for n in needles)):
            self.fail(f"got {got}, want {status} {code} with a message holding {needles}")
        self.assertTrue(connection.closed(), "the connection stays open after the error")


class ChunkedTest(FramingTestCase):
    """A chunked body is taken only when it ends with its last chunk."""

    server_flags = FLAGS

    def test_a_body_in_two_chunks_is_translated_and_the_connection_stays_open(self):
        body = translate_body()
        with self.connect() as c:
            c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked")
                   + chunk(body[:10]).decode() + chunk(body[10:]).decode() + "0\r\n\r\n")
            first = c.answer()
            c.send(head("GET", "/healthz"))
            second = c.answer()
        self.assertIsNotNone(first_translation(first), f"{first}")
        self.assertTrue(second is not None and second[0] == 200,
                        f"the next request on the connection: {second}")

    def test_a_chunked_body_without_its_last_chunk_gets_408(self):
        # Not taken as complete (nor as empty).
        with self.connect() as c:
            c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked")
                   + chunk(translate_body()).decode())
            self.assertErrorThenClosed(c, c.answer(), 408, "DEADLINE_EXCEEDED",
                                       "last (zero-size) chunk", "--http_timeout")

    def test_a_chunked_stream_without_its_last_chunk_gets_408_not_a_200_that_drops_a_text(self):
        with self.connect() as c:
            c.send(head("POST", "/v1/translate:stream", "Transfer-Encoding: chunked")
                   + chunk(stream_body(TEXT, "A dog runs.")).decode())
            self.assertErrorThenClosed(c, c.answer(), 408, "DEADLINE_EXCEEDED",
                                       "last (zero-size)")


class OverTls:
    """Mixed in before a FramingTestCase: its server serves TLS only, with a certificate its
    connections trust."""

    @classmethod
    def setUpClass(cls):
        tmp = cls.class_temp_dir()
        ca = make_ca(tmp, "ca")
        cert = make_certificate(tmp, "server", ca)
        cls.server_flags = (*FLAGS, f"--tls_cert={cert.cert}", f"--tls_key={cert.key}")
        cls.context = ssl.create_default_context(cafile=ca.cert)
        super().setUpClass()


class ChunkedTlsTest(OverTls, ChunkedTest):
    """The same over TLS."""


class ReadAheadTest(FramingTestCase):
    """What the server reads ahead of the request it answers is read once, in order."""

    server_flags = FLAGS

    def test_a_request_after_pipelined_ones_is_answered_as_itself(self):
        # The next request arrives while the server still reads ahead of the pipelined second
        # one: its bytes must be read as they are, not the first request's bytes again.
        with self.connect() as c:
            c.send(head("GET", "/v1/models") + head("GET", "/healthz"))
            first, second = c.answer(), c.answer()
            c.send(head("GET", "/readyz"))
            third = c.answer()
            c.send(head("GET", "/v1/models"))
            fourth = c.answer()
        for name, answer, needle in (("first", first, b"models"), ("second", second, b"SERVING"),
                                     ("third", third, b"SERVING"), ("fourth", fourth, b"models")):
            self.assertTrue(answer is not None and answer[0] == 200 and needle in answer[2],
                            f"the {name} answer: {answer}")


class ReadAheadTlsTest(OverTls, ReadAheadTest):
    """The same over TLS."""


class FramingTest(FramingTestCase):
    server_flags = FLAGS

    def test_a_chunk_size_that_is_not_hexadecimal_gets_400(self):
        with self.connect() as c:
            c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked") + "zz\r\n"
                   + translate_body())
            self.assertErrorThenClosed(c, c.answer(), 400, "INVALID_ARGUMENT",
                                       "chunked request body is malformed", "RFC 9112")

    def test_a_chunk_longer_than_its_size_on_the_stream_route_gets_400(self):
        with self.connect() as c:
            c.send(head("POST", "/v1/translate:stream", "Transfer-Encoding: chunked")
                   + chunk(stream_body(TEXT)).decode() + "5\r\nabcdefg\r\n0\r\n\r\n")
            self.assertErrorThenClosed(c, c.answer(), 400, "INVALID_ARGUMENT",
                                       "chunked request body is malformed")

    def test_a_chunk_extension_is_ignored(self):
        # RFC 9112 §7.1.1: a recipient ignores chunk extensions it does not understand.
        body = translate_body()
        with self.connect() as c:
            c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked")
                   + f"{len(body):x};name=value\r\n{body}\r\n0\r\n\r\n")
            answer = c.answer()
        self.assertIsNotNone(first_translation(answer), f"the body is translated: {answer}")

    def test_framing_two_readers_could_take_differently_gets_400(self):
        body = translate_body()
        for name, fields, needles in [
                ("two different Content-Length headers",
                 [f"Content-Length: {len(body)}", f"Content-Length: {len(body) + 1}"],
                 ["Content-Length is given twice"]),
                ("Content-Length and Transfer-Encoding: chunked",
                 [f"Content-Length: {len(body)}", "Transfer-Encoding: chunked"],
                 ["Content-Length and Transfer-Encoding"]),
                ("Transfer-Encoding: identity and Content-Length",
                 ["Transfer-Encoding: identity", f"Content-Length: {len(body)}"],
                 ["Transfer-Encoding"]),
                ("a Content-Length with more than digits",
                 [f"Content-Length: {len(body)}abc"], ["Content-Length", "digits only"])]:
            with self.subTest(name), self.connect() as c:
                c.send(head("POST", "/v1/translate", *fields) + body)
                self.assertErrorThenClosed(c, c.answer(), 400, "INVALID_ARGUMENT", *needles)

    def test_every_header_field_is_read(self):
        # None is dropped, so none can hide a framing.
        with self.connect() as c:
            c.send(head("GET", "/healthz", *(f"X-Pad-{i}: {i}" for i in range(200))))
            answer = c.answer()
        self.assertTrue(answer is not None and answer[0] == 200,
                        f"200 header fields: {answer}")
        body = translate_body()
        with self.connect() as c:
            c.send(head("POST", "/v1/translate", *(f"X-Pad-{i}: {i}" for i in range(100)),
                        f"Content-Length: {len(body)}") + body)
            answer = c.answer()
        self.assertIsNotNone(first_translation(answer),
                             f"a Content-Length after 100 header fields frames the body: {answer}")

    def test_a_head_over_16_kib_gets_431(self):
        # The head's size is bounded instead of its fields' number.
        with self.connect() as c:
            c.send(head("GET", "/healthz", f"X-Big: {'x' * 17000}"))
            self.assertErrorThenClosed(c, c.answer(), 431, "INVALID_ARGUMENT", "16384 bytes")


class KeepAliveTest(FramingTestCase):
    server_flags = FLAGS

    def test_pipelined_gets_are_answered_in_order_on_one_connection(self):
        with self.connect() as c:
            c.send(head("GET", "/healthz") + head("GET", "/v1/models") + head("GET", "/readyz"))
            answers = [c.answer() for _ in range(3)]
        self.assertEqual([a[0] if a else None for a in answers], [200, 200, 200], f"{answers}")
        self.assertIn(b"SERVING", answers[0][2], "the first answer, /healthz's")
        self.assertIn(b"models", answers[1][2], "the second answer, /v1/models's")
        self.assertIn(b"SERVING", answers[2][2], "the third answer, /readyz's")
        self.assertNotEqual(answers[0][1].get("connection", "").lower(), "close",
                            "a GET answer keeps the connection alive")

    def test_head_then_get_on_one_connection(self):
        with self.connect() as c:
            c.send(head("HEAD", "/healthz") + head("GET", "/healthz"))
            line = c.reader.readline()
            while c.reader.readline() not in (b"\r\n", b""):
                pass
            second = c.answer()
        self.assertTrue(line.startswith(b"HTTP/1.1 200"), f"HEAD: {line!r}")
        self.assertTrue(second is not None and second[0] == 200, f"GET after HEAD: {second}")

    def test_health_paths_take_get_and_head_only(self):
        for path in ("/healthz", "/readyz"):
            for method in ("POST", "DELETE"):
                with self.subTest(f"{method} {path}"):
                    with self.connect() as c:
                        c.send(head(method, path, "Content-Length: 0"))
                        answer = c.answer()
                    self.assertEqual(error_of(answer)[0], 405, f"{answer}")
                    self.assertEqual(answer[1].get("allow"), "GET, HEAD")


class ApiKeyTest(FramingTestCase):
    """With --api_keys_file, a header's key is checked before the body is read."""

    @classmethod
    def setUpClass(cls):
        keys_path = os.path.join(cls.class_temp_dir(), "keys.txt")
        with open(keys_path, "w") as f:
            f.write(f"alice sha256:{hashlib.sha256(KEY.encode()).hexdigest()}\n")
        # A long --http_timeout: a body the server waited for would be answered 408 only after it.
        cls.server_flags = ("--workers=1", "--http_timeout=10s", f"--api_keys_file={keys_path}")
        super().setUpClass()

    def libretranslate(self, body, *fields):
        """LibreTranslate's /translate of TEXT with these fields in the body and the head."""
        body = json.dumps({"q": TEXT, "source": "en", "target": "de", **body})
        with self.connect() as c:
            c.send(head("POST", "/translate", "Content-Type: application/json", *fields,
                        f"Content-Length: {len(body)}") + body)
            return c.answer()

    def test_a_wrong_header_key_is_refused_before_the_body_is_read(self):
        # Headers that announce a large body and send none: not the 408 of a body that never came.
        for path, status, code, key_header in [
                ("/v1/translate", 401, "UNAUTHENTICATED", "Authorization: Bearer wrong"),
                ("/v1/translate:stream", 401, "UNAUTHENTICATED", "X-API-Key: wrong"),
                ("/translate", 403, "", "X-API-Key: wrong")]:
            with self.subTest(path), self.connect() as c:
                c.send(head("POST", path, "Content-Type: application/json",
                            "Content-Length: 4000000", key_header))
                got = error_of(c.answer())
                self.assertEqual(got[0], status, f"{got}")
                if code:
                    self.assertEqual(got[1], code, f"{got}")
                self.assertTrue(c.closed(), "the unread body closes the connection")

    def test_libretranslates_api_key_in_the_body_works_without_a_header_key(self):
        answer = self.libretranslate({"api_key": KEY})
        self.assertTrue(answer is not None and answer[0] == 200, f"{answer}")
        self.assertIn("translatedText", json.loads(answer[2]))

    def test_a_good_header_key_works(self):
        answer = self.libretranslate({}, f"X-API-Key: {KEY}")
        self.assertTrue(answer is not None and answer[0] == 200, f"{answer}")

    def test_a_request_checked_early_is_charged_once(self):
        def charged():
            return metric_total(self.server.metrics(), "mtserve_api_key_requests_total",
                                key="alice", code="OK")

        before = charged()
        self.assertEqual(self.libretranslate({"api_key": KEY})[0], 200)
        self.assertEqual(self.libretranslate({}, f"X-API-Key: {KEY}")[0], 200)
        self.assertEqual(charged() - before, 2, "two requests charged twice, not four times")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir")
