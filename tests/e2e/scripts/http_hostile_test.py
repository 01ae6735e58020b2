#!/usr/bin/env python3
"""Hostile HTTP clients against a real mtserve on the loopback, with short deadlines (every
--http_timeout deadline 1 s): what slow, silent and departing clients can and cannot do.

- Many hostile sockets at once (silent after connecting, headers a byte at a time, a body a byte
  at a time, idle keep-alive after one answer, pipelined requests whose answers are never read):
  a well-behaved translation made meanwhile is answered correctly, and every hostile socket is
  closed by the server.
- The same with half TLS handshakes against a TLS server: an HTTPS translation is answered, every
  half handshake is closed.
- SIGTERM with one translation in flight and one waiting for the only handler thread: both get
  an answer (the first in full, the second in full or 503), none a dropped connection; mtserve
  exits 0.
- A client that disconnects while its translation runs cancels it: the core counts it CANCELLED.
- --http_max_connections_per_address: a connection over the cap is closed at once, a freed slot
  is served again; behind a proxy of --http_trusted_proxies, the cap counts the forwarded client's
  requests (429 over it), and an untrusted peer's X-Forwarded-For is not believed.

Every wait is for an event (an answer, a closed socket, a metric); the bounds only keep a broken
server from hanging the test.

Usage: http_hostile_test.py BIN_DIR MULTI30K_TEXT [-- UNITTEST ARGUMENTS]
"""
import json
import os
import re
import signal
import socket
import ssl
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call, first_translation, requests_total  # noqa: E402
from mtserve_process import wait_until  # noqa: E402
from test_certificates import make_ca, make_certificate  # noqa: E402

SENTENCES = []
TEXT = "A man is riding a bike."
EXPECTED = "Ein Mann fährt auf einem Fahrrad."
FLAGS = ["--workers=1", "--http_threads=2", "--http_timeout=1s", "--cache_bytes=0"]
# Of each kind of hostile socket.
PER_KIND = 40
# A bound that only keeps a broken server from hanging the test.
HANG_GUARD = 120


def setUpModule():
    with open(e2e_suite.ARGS.multi30k_text) as f:
        SENTENCES.extend(line.strip() for line in f if line.strip())


def translate_body(text=TEXT):
    return json.dumps({"texts": [text]}).encode()


class Hostile:
    """Hostile sockets driven from one thread: each kind sends what it sends (a byte at a time
    for the trickling kinds) until the server closes it, which is recorded."""

    def __init__(self):
        self.sockets = {}  # socket -> {"kind", "pending" bytes to trickle, "closed"}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def add(self, kind, sock, trickle=b""):
        sock.setblocking(False)
        with self.lock:
            self.sockets[sock] = {"kind": kind, "pending": trickle, "closed": False}

    def start(self):
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            with self.lock:
                items = list(self.sockets.items())
            for sock, state in items:
                if state["closed"]:
                    continue
                try:
                    # Reads nothing of what "unread" sockets are sent: a peek finds the end.
                    data = sock.recv(1, socket.MSG_PEEK) if state["kind"] == "unread" else \
                        sock.recv(65536)
                    if data == b"":
                        state["closed"] = True
                        continue
                except BlockingIOError:
                    pass
                except (ConnectionResetError, BrokenPipeError, ssl.SSLError, OSError):
                    state["closed"] = True
                    continue
                if state["kind"] == "unread" and self._unread_closed(sock):
                    state["closed"] = True
                    continue
                if state["pending"]:
                    try:
                        sock.send(state["pending"][:1])
                        state["pending"] = state["pending"][1:]
                    except BlockingIOError:
                        pass
                    except OSError:
                        state["closed"] = True
            time.sleep(0.1)

    @staticmethod
    def _unread_closed(sock):
        """An "unread" socket is closed once the server has shut its side: the kernel reports
        the peer's FIN or reset through TCP_INFO's state (not ESTABLISHED)."""
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)
        return info[0] != 1  # TCP_ESTABLISHED

    def open_kinds(self):
        with self.lock:
            return sorted({s["kind"] for s in self.sockets.values() if not s["closed"]})

    def all_closed(self):
        with self.lock:
            return all(s["closed"] for s in self.sockets.values())

    def close(self):
        self.stop.set()
        self.thread.join(10)
        for sock in self.sockets:
            sock.close()


def connect(port, rcvbuf=None):
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    return sock


def read_answer(sock):
    """One whole answer (Content-Length framed) from a blocking socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += sock.recv(4096)
    return head + b"\r\n\r\n" + body



def long_document():
    """A text that keeps the one worker busy a while."""
    return " ".join(SENTENCES[:400])


class HostileSocketsTest(e2e_suite.MtserveTestCase):
    def test_hostile_sockets_are_closed_and_others_are_served(self):
        server = self.start_mtserve(*FLAGS)
        port = server.http_port
        hostile = Hostile()
        body = translate_body()
        for _ in range(PER_KIND):
            hostile.add("silent", connect(port))
            hostile.add("trickled head", connect(port),
                        b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"x" * 200)
            hostile.add("trickled body", connect(port),
                        b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: "
                        + str(len(body) + 400).encode() + b"\r\n\r\n" + body + b" " * 400)
            idle = connect(port)
            idle.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertIn(b"200 OK", read_answer(idle))
            hostile.add("idle keep-alive", idle)
            # Requests for the page, never read: the answers fill the socket's buffers.
            unread = connect(port, rcvbuf=4096)
            unread.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 400)
            hostile.add("unread", unread)
        hostile.start()
        try:
            answer = call(port, "POST", "/v1/translate", translate_body(), timeout=HANG_GUARD)
            self.assertEqual(first_translation(answer), EXPECTED, f"{answer}")
            self.assertTrue(wait_until(hostile.all_closed, HANG_GUARD),
                            f"still open: {hostile.open_kinds()}")
            # And the server still serves.
            answer = call(port, "POST", "/v1/translate", translate_body(), timeout=HANG_GUARD)
            self.assertEqual(first_translation(answer), EXPECTED, f"{answer}")
        finally:
            hostile.close()

    def test_half_tls_handshakes_are_closed_and_https_is_served(self):
        tmp = self.temp_dir()
        ca = make_ca(tmp, "ca")
        cert = make_certificate(tmp, "server", ca)
        server = self.start_mtserve(*FLAGS, f"--tls_cert={cert.cert}", f"--tls_key={cert.key}")
        port = server.http_port
        hostile = Hostile()
        for _ in range(PER_KIND):
            hostile.add("silent", connect(port))
            # A TLS record header promising a ClientHello that never comes whole.
            hostile.add("half handshake", connect(port),
                        bytes([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03]))
        hostile.start()
        try:
            context = ssl.create_default_context(cafile=ca.cert)
            with socket.create_connection(("127.0.0.1", port), timeout=HANG_GUARD) as raw:
                with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                    body = translate_body()
                    tls.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\n"
                                b"Content-Length: " + str(len(body)).encode()
                                + b"\r\n\r\n" + body)
                    answer = read_answer(tls)
            head, _, payload = answer.partition(b"\r\n\r\n")
            self.assertTrue(head.startswith(b"HTTP/1.1 200"), f"{answer[:300]!r}")
            self.assertEqual(
                json.loads(payload)["translations"][0]["hypotheses"][0]["text"], EXPECTED)
            self.assertTrue(wait_until(hostile.all_closed, HANG_GUARD),
                            f"still open: {hostile.open_kinds()}")
        finally:
            hostile.close()


class LifecycleTest(e2e_suite.MtserveTestCase):
    def test_requests_read_at_sigterm_are_answered(self):
        server = self.start_mtserve("--workers=1", "--http_threads=1", "--http_timeout=60s",
                                    "--shutdown_grace=120s", "--cache_bytes=0")
        port = server.http_port
        results = {}
        first = threading.Thread(target=lambda: results.setdefault("first", call(
            port, "POST", "/v1/translate", translate_body(long_document()), timeout=300)),
            daemon=True)
        first.start()
        self.assertTrue(wait_until(lambda: re.search(
            r"^mtserve_in_flight_requests\{[^}]*\} 1", server.metrics(), re.MULTILINE),
            HANG_GUARD))
        # The second is sent whole while the only handler thread translates the first: it
        # waits for the thread (or, not read yet, is read as the server drains).
        second = connect(port)
        second.settimeout(HANG_GUARD)
        body = translate_body()
        second.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: "
                       + str(len(body)).encode() + b"\r\n\r\n" + body)
        server.process.send_signal(signal.SIGTERM)
        server.wait_ready("draining")
        answer = read_answer(second)
        second.close()
        first.join(300)
        status, _, payload = results.get("first", (None, None, b""))
        self.assertEqual(status, 200, payload[:300])
        self.assertGreater(
            len(json.loads(payload)["translations"][0]["hypotheses"][0]["text"]),
            len(long_document()) // 2)
        self.assertRegex(answer[:12], rb"HTTP/1.1 (200|503)", f"{answer[:300]!r}")
        self.assertEqual(server.process.wait(timeout=HANG_GUARD), 0, server.stderr())

    def test_a_client_that_leaves_cancels_its_translation(self):
        server = self.start_mtserve("--workers=1", "--http_timeout=60s", "--cache_bytes=0")
        port = server.http_port
        body = translate_body(long_document())
        sock = connect(port)
        sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
        self.assertTrue(wait_until(lambda: re.search(
            r"^mtserve_in_flight_requests\{[^}]*\} 1", server.metrics(), re.MULTILINE),
            HANG_GUARD))
        sock.close()
        self.assertTrue(wait_until(lambda: requests_total(
            server.metrics(), frontend="http", method="Translate", code="CANCELLED") == 1,
            HANG_GUARD), server.metrics())
        # Nothing of it finished: it was cut short, not translated to the end.
        self.assertEqual(requests_total(server.metrics(), frontend="http", method="Translate",
                                        code="OK"), 0)


class ConnectionCapTest(e2e_suite.MtserveTestCase):
    def test_connections_over_the_cap_are_closed(self):
        server = self.start_mtserve(*FLAGS, "--http_timeout=60s",
                                    "--http_max_connections_per_address=3")
        port = server.http_port
        held = []
        for _ in range(3):
            sock = connect(port)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            self.assertIn(b"200 OK", read_answer(sock))
            held.append(sock)
        over = connect(port)
        over.settimeout(HANG_GUARD)
        try:
            self.assertEqual(over.recv(1), b"")
        except ConnectionResetError:
            pass
        over.close()
        held.pop().close()

        def served():
            try:
                answer = call(port, "GET", "/healthz", timeout=10)
                return answer[0] == 200
            except OSError:
                return False

        self.assertTrue(wait_until(served, HANG_GUARD))
        for sock in held:
            sock.close()

    def test_a_trusted_proxys_clients_are_capped_by_request(self):
        server = self.start_mtserve("--workers=1", "--http_timeout=60s", "--cache_bytes=0",
                                    "--http_max_connections_per_address=1",
                                    "--http_trusted_proxies=127.0.0.1")
        port = server.http_port
        result = {}
        slow = threading.Thread(target=lambda: result.setdefault("slow", call(
            port, "POST", "/v1/translate", translate_body(long_document()),
            headers={"X-Forwarded-For": "203.0.113.5"}, timeout=300)), daemon=True)
        slow.start()
        self.assertTrue(wait_until(lambda: re.search(
            r"^mtserve_in_flight_requests\{[^}]*\} 1", server.metrics(), re.MULTILINE),
            HANG_GUARD))
        same = call(port, "GET", "/healthz", headers={"X-Forwarded-For": "203.0.113.5"})
        self.assertEqual(same[0], 429, f"{same}")
        self.assertIn(b"--http_max_connections_per_address", same[2])
        other = call(port, "GET", "/healthz", headers={"Forwarded": "for=198.51.100.7"})
        self.assertEqual(other[0], 200, f"{other}")
        slow.join(300)
        self.assertEqual(result["slow"][0], 200)
        # The request stays open on the server until its handler returns, a moment after the
        # client has read the answer: then the client is served again.
        self.assertTrue(wait_until(lambda: call(
            port, "GET", "/healthz", headers={"X-Forwarded-For": "203.0.113.5"})[0] == 200,
            HANG_GUARD))

    def test_an_untrusted_peers_forwarded_address_is_not_believed(self):
        server = self.start_mtserve(*FLAGS, "--http_timeout=60s",
                                    "--http_max_connections_per_address=1",
                                    "--http_trusted_proxies=192.0.2.1")
        port = server.http_port
        held = connect(port)
        held.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        self.assertIn(b"200 OK", read_answer(held))
        # 127.0.0.1 holds its one connection: naming another client does not help.
        over = connect(port)
        over.settimeout(HANG_GUARD)
        try:
            over.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                         b"X-Forwarded-For: 198.51.100.7\r\n\r\n")
            self.assertEqual(over.recv(4096), b"")
        except (ConnectionResetError, BrokenPipeError):
            pass
        over.close()
        held.close()


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "multi30k_text")
