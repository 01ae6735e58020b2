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
- GET keeps the connection alive: pipelined GETs on one connection are answered in order.
- /healthz and /readyz take GET and HEAD only: POST and DELETE get 405 with "Allow: GET, HEAD".
- With --api_keys_file, a wrong key in a header is refused before the body is read: headers that
  announce a large body and send none get 401 (/v1/translate) or 403 (LibreTranslate's
  /translate), not the 408 of a body that never came. LibreTranslate's api_key in the body still
  works without a header key, and a request checked early is charged once.

Usage: http_framing_test.py BIN_DIR
"""
import hashlib
import json
import os
import re
import socket
import ssl
import sys
import tempfile

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import Checks  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402
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


def translated(answer):
    """The first translation of a /v1/translate answer, or None."""
    if answer is None or answer[0] != 200:
        return None
    return json.loads(answer[2])["translations"][0]["hypotheses"][0]["text"]


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


def expect_error(checks, name, connection, answer, status, code, *needles):
    """An error answer with this status, code and words, after which the connection closes."""
    got = error_of(answer)
    checks.expect(f"{name}: {status} {code}",
                  got[0] == status and got[1] == code and all(n in got[2] for n in needles),
                  f"got {got}, want {status} {code} {needles}")
    checks.expect(f"{name}: the connection closes", connection.closed())


def run_chunked_checks(checks, port, context=None):
    over = " (TLS)" if context else ""
    with Connection(port, context) as c:
        body = translate_body()
        c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked")
               + chunk(body[:10]).decode() + chunk(body[10:]).decode() + "0\r\n\r\n")
        first = c.answer()
        c.send(head("GET", "/healthz"))
        second = c.answer()
    checks.expect(f"a body in two chunks is translated{over}", translated(first) is not None,
                  f"{first}")
    checks.expect(f"the connection stays open after a chunked body{over}",
                  second is not None and second[0] == 200, f"{second}")

    # The last chunk never comes: the body is not taken as complete (nor as empty).
    with Connection(port, context) as c:
        c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked") + chunk(body).decode())
        expect_error(checks, f"a chunked body without its last chunk{over}", c, c.answer(), 408,
                     "DEADLINE_EXCEEDED", "last (zero-size) chunk", "--http_timeout")
    with Connection(port, context) as c:
        c.send(head("POST", "/v1/translate:stream", "Transfer-Encoding: chunked")
               + chunk(stream_body(TEXT, "A dog runs.")).decode())
        expect_error(checks, f"a chunked stream without its last chunk (no 200 that drops a "
                     f"text){over}", c, c.answer(), 408, "DEADLINE_EXCEEDED", "last (zero-size)")


def run_framing_checks(checks, port):
    body = translate_body()
    # Broken chunked framing: 400, at once.
    with Connection(port) as c:
        c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked") + "zz\r\n" + body)
        expect_error(checks, "a chunk size that is not hexadecimal", c, c.answer(), 400,
                     "INVALID_ARGUMENT", "chunked request body is malformed", "RFC 9112")
    with Connection(port) as c:
        c.send(head("POST", "/v1/translate:stream", "Transfer-Encoding: chunked")
               + chunk(stream_body(TEXT)).decode() + "5\r\nabcdefg\r\n0\r\n\r\n")
        expect_error(checks, "a chunk longer than its size, on the stream route", c, c.answer(),
                     400, "INVALID_ARGUMENT", "chunked request body is malformed")
    # RFC 9112 §7.1.1: a recipient ignores chunk extensions it does not understand.
    with Connection(port) as c:
        c.send(head("POST", "/v1/translate", "Transfer-Encoding: chunked")
               + f"{len(body):x};name=value\r\n{body}\r\n0\r\n\r\n")
        answer = c.answer()
        checks.expect("a chunk extension is ignored: the body is translated",
                      translated(answer) is not None, f"{answer}")

    # Framing two readers could take differently.
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
        with Connection(port) as c:
            c.send(head("POST", "/v1/translate", *fields) + body)
            expect_error(checks, name, c, c.answer(), 400, "INVALID_ARGUMENT", *needles)
    # Every field is read: none is dropped, so none can hide a framing.
    with Connection(port) as c:
        c.send(head("GET", "/healthz", *(f"X-Pad-{i}: {i}" for i in range(200))))
        answer = c.answer()
        checks.expect("200 header fields are served", answer is not None and answer[0] == 200,
                      f"{answer}")
    with Connection(port) as c:
        c.send(head("POST", "/v1/translate", *(f"X-Pad-{i}: {i}" for i in range(100)),
                    f"Content-Length: {len(body)}") + body)
        answer = c.answer()
        checks.expect("a Content-Length after 100 header fields frames the body",
                      translated(answer) is not None, f"{answer}")
    # The head's size is bounded instead.
    with Connection(port) as c:
        c.send(head("GET", "/healthz", f"X-Big: {'x' * 17000}"))
        expect_error(checks, "a head over 16 KiB", c, c.answer(), 431, "INVALID_ARGUMENT",
                     "16384 bytes")


def run_keep_alive_checks(checks, port):
    with Connection(port) as c:
        c.send(head("GET", "/healthz") + head("GET", "/v1/models") + head("GET", "/readyz"))
        answers = [c.answer() for _ in range(3)]
    statuses = [a[0] if a else None for a in answers]
    ordered = (statuses == [200, 200, 200] and b"models" in answers[1][2]
               and b"SERVING" in answers[0][2] and b"SERVING" in answers[2][2])
    checks.expect("three pipelined GETs are answered in order on one connection", ordered,
                  f"{answers}")
    checks.expect("a GET answer keeps the connection alive",
                  answers[0] is not None and answers[0][1].get("connection", "").lower() != "close",
                  f"{answers[0]}")
    with Connection(port) as c:
        c.send(head("HEAD", "/healthz") + head("GET", "/healthz"))
        line = c.reader.readline()
        while c.reader.readline() not in (b"\r\n", b""):
            pass
        second = c.answer()
    checks.expect("HEAD, then GET, on one connection",
                  line.startswith(b"HTTP/1.1 200") and second is not None and second[0] == 200,
                  f"{line!r} {second}")


def run_health_method_checks(checks, port):
    for path in ("/healthz", "/readyz"):
        for method in ("POST", "DELETE"):
            with Connection(port) as c:
                c.send(head(method, path, "Content-Length: 0"))
                answer = c.answer()
            got = error_of(answer)
            checks.expect(f"{method} {path}: 405 with Allow: GET, HEAD",
                          got[0] == 405 and answer[1].get("allow") == "GET, HEAD",
                          f"{answer}")


def run_key_checks(checks, bin_dir, tmp):
    keys_path = os.path.join(tmp, "keys.txt")
    with open(keys_path, "w") as f:
        f.write(f"alice sha256:{hashlib.sha256(KEY.encode()).hexdigest()}\n")
    # A long --http_timeout: a body the server waited for would be answered 408 only after it.
    with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1", "--http_timeout=10s",
                        f"--api_keys_file={keys_path}") as server:
        port = server.http_port
        announced = "Content-Length: 4000000"
        for path, status, code, key_header in [
                ("/v1/translate", 401, "UNAUTHENTICATED", "Authorization: Bearer wrong"),
                ("/v1/translate:stream", 401, "UNAUTHENTICATED", "X-API-Key: wrong"),
                ("/translate", 403, "", "X-API-Key: wrong")]:
            with Connection(port) as c:
                c.send(head("POST", path, "Content-Type: application/json", announced,
                            key_header))
                answer = c.answer()
                got = error_of(answer)
                checks.expect(f"{path}: a wrong header key is refused before the body is read "
                              f"({status})",
                              got[0] == status and (not code or got[1] == code),
                              f"got {got}, want {status} {code}")
                checks.expect(f"{path}: the unread body closes the connection", c.closed())

        libre = {"q": TEXT, "source": "en", "target": "de"}
        with Connection(port) as c:
            body = json.dumps({**libre, "api_key": KEY})
            c.send(head("POST", "/translate", "Content-Type: application/json",
                        f"Content-Length: {len(body)}") + body)
            answer = c.answer()
        checks.expect("/translate: the body's api_key works without a header key",
                      answer is not None and answer[0] == 200
                      and "translatedText" in json.loads(answer[2]), f"{answer}")
        with Connection(port) as c:
            body = json.dumps(libre)
            c.send(head("POST", "/translate", "Content-Type: application/json",
                        f"X-API-Key: {KEY}", f"Content-Length: {len(body)}") + body)
            answer = c.answer()
        checks.expect("/translate: a good header key works", answer is not None
                      and answer[0] == 200, f"{answer}")
        charged = api_key_requests(server.metrics(), key="alice", code="OK")
        checks.expect("two /translate requests are charged twice, not four times", charged == 2,
                      f"{charged}")


def api_key_requests(text, **labels):
    """The sum of mtserve_api_key_requests_total over the series with these labels."""
    total = 0.0
    for match in re.finditer(r"^mtserve_api_key_requests_total\{([^}]*)\} (\S+)$", text,
                             re.MULTILINE):
        series = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if all(series.get(k) == v for k, v in labels.items()):
            total += float(match.group(2))
    return total


def main():
    bin_dir = sys.argv[1]
    checks = Checks()
    with tempfile.TemporaryDirectory(prefix="mtserve_framing_") as tmp:
        with MtserveProcess(os.path.join(bin_dir, "mtserve"), *FLAGS) as server:
            run_chunked_checks(checks, server.http_port)
            run_framing_checks(checks, server.http_port)
            run_keep_alive_checks(checks, server.http_port)
            run_health_method_checks(checks, server.http_port)
        ca = make_ca(tmp, "ca")
        cert = make_certificate(tmp, "server", ca)
        with MtserveProcess(os.path.join(bin_dir, "mtserve"), *FLAGS, f"--tls_cert={cert.cert}",
                            f"--tls_key={cert.key}") as server:
            run_chunked_checks(checks, server.http_port, ssl.create_default_context(
                cafile=ca.cert))
        run_key_checks(checks, bin_dir, tmp)
    print(f"{checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
