#!/usr/bin/env python3
"""The HTTP/JSON API of a real mtserve, with the Python standard library as the client.

- /v1/translate answers what gRPC (mtclient, on the same server) answers for the same texts;
  keep-alive carries several requests on one connection.
- /v1/models lists the model; /healthz and /readyz answer 200.
- /v1/translate:stream answers one NDJSON line per text, each with its id; a failing text gets
  an error line and the others still come.
- Errors are JSON {"code", "message"} with the HTTP status of the gRPC code: bad JSON 400,
  unknown model 404, over a limit 400 naming the field and the limit, a body over the limit 413,
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

Usage: http_api_test.py BIN_DIR MULTI30K_TEXT
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
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from e2e_suite import requests_total  # noqa: E402
from http_checks import Checks, call  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

FLAGS = ["--workers=1", "--http_threads=2", "--http_timeout=1s", "--max_message_bytes=65536",
         "--max_text_bytes=4096", "--max_texts_per_request=8"]


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


def grpc_translations(bin_dir, server, lines, *flags):
    out = subprocess.run([os.path.join(bin_dir, "mtclient"), "translate",
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


def main():
    bin_dir, source = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]
    checks = Checks()
    server = MtserveProcess(os.path.join(bin_dir, "mtserve"), *FLAGS)
    try:
        run_api_checks(checks, bin_dir, server, sentences)
        run_slow_client_checks(checks, server)
        run_metrics_checks(checks, server)
    finally:
        server.stop()
    run_drain_checks(checks, bin_dir, sentences)
    print(f"{checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


def run_api_checks(checks, bin_dir, server, sentences):
    port = server.http_port
    lines = sentences[:3]
    expected = grpc_translations(bin_dir, server, lines, "--beam_size=4")

    status, _, body = call(port, "GET", "/healthz")
    checks.expect("/healthz 200", status == 200, f"{status} {body!r}")
    status, _, body = call(port, "GET", "/readyz")
    checks.expect("/readyz 200 SERVING", status == 200 and json.loads(body)["status"] == "SERVING",
                  f"{status} {body!r}")

    status, headers, body = call(port, "POST", "/v1/translate",
                                 {"texts": lines, "options": {"beam_size": 4}})
    answer = json.loads(body) if status == 200 else {}
    texts = [t["hypotheses"][0]["text"] for t in answer.get("translations", [])]
    checks.expect("/v1/translate answers what gRPC answers", status == 200 and texts == expected,
                  f"{status} {body[:400]!r}; gRPC: {expected}")
    checks.expect("/v1/translate answers JSON with the model's name",
                  headers.get("Content-Type") == "application/json" and answer.get("model"),
                  f"{headers.get('Content-Type')} {answer.get('model')!r}")
    paragraph = " ".join(lines)
    status, _, body = call(port, "POST", "/v1/translate",
                           {"texts": [paragraph], "options": {"beamSize": 4, "return_scores": True}})
    answer = json.loads(body) if status == 200 else {}
    translation = answer.get("translations", [{}])[0]
    hypothesis = translation.get("hypotheses", [{}])[0]
    checks.expect("a paragraph is split into sentences, as over gRPC",
                  status == 200 and hypothesis.get("text") == " ".join(expected)
                  and len(translation.get("sentences", [])) == 3 and "score" in hypothesis
                  and hypothesis.get("token_log_probs"),
                  f"{status} {body[:600]!r}")

    # Keep-alive: three requests on one connection, one socket.
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    statuses, sockets = [], set()
    for _ in range(3):
        connection.request("POST", "/v1/translate", body=json.dumps({"texts": lines[:1]}))
        response = connection.getresponse()
        response.read()
        statuses.append(response.status)
        sockets.add(id(connection.sock))
    connection.close()
    checks.expect("keep-alive: requests share a connection",
                  statuses == [200] * 3 and len(sockets) == 1, f"{statuses}, {len(sockets)} sockets")

    status, _, body = call(port, "GET", "/v1/models")
    models = json.loads(body).get("models", []) if status == 200 else []
    checks.expect("/v1/models lists the default model with its limits",
                  len(models) == 1 and models[0].get("is_default") is True
                  and models[0].get("name") == answer.get("model")
                  and models[0].get("max_input_tokens", 0) > 0, f"{status} {body[:400]!r}")
    limits = json.loads(body).get("limits") if status == 200 else None
    checks.expect("/v1/models gives the request limits the server was started with",
                  limits == {"max_texts_per_request": 8, "max_text_bytes": 4096,
                             "max_beam_size": 16, "max_sampling_topk": 1000}, f"{limits}")

    # Streaming: NDJSON in, NDJSON out, one line per text.
    stream = "\n".join([json.dumps({"id": str(i), "text": t, "options": {"beam_size": 4}})
                        for i, t in enumerate(lines)]
                       + [json.dumps({"id": "bad", "text": "x", "model": "no-such-model"})]) + "\n"
    status, headers, body = call(port, "POST", "/v1/translate:stream", stream)
    answers = [json.loads(line) for line in body.decode().splitlines()] if status == 200 else []
    by_id = {a.get("id"): a for a in answers}
    checks.expect("/v1/translate:stream: one NDJSON line per text",
                  status == 200 and headers.get("Content-Type") == "application/x-ndjson"
                  and len(answers) == 4 and set(by_id) == {"0", "1", "2", "bad"},
                  f"{status} {headers.get('Content-Type')} {body[:600]!r}")
    checks.expect("/v1/translate:stream: each line is its text's translation",
                  all(by_id.get(str(i), {}).get("translation", {}).get("hypotheses", [{}])[0]
                      .get("text") == expected[i] for i in range(3)), f"{body[:600]!r}")
    bad = by_id.get("bad", {}).get("error", {})
    checks.expect("/v1/translate:stream: a failing text gets its error (NOT_FOUND, code 5)",
                  bad.get("code") == 5 and "no-such-model" in bad.get("message", ""), f"{bad}")
    checks.error("a stream line that is not JSON",
                 call(port, "POST", "/v1/translate:stream", '{"id": "a", "text": "x"}\n{oops\n'),
                 400, "INVALID_ARGUMENT", "line 2 of the request body is not JSON")

    checks.error("bad JSON", call(port, "POST", "/v1/translate", '{"texts": ["a"'),
                 400, "INVALID_ARGUMENT", "the request body is not JSON")
    checks.error("a misspelt field",
                 call(port, "POST", "/v1/translate", {"texts": ["a"], "options": {"beam": 2}}),
                 400, "INVALID_ARGUMENT", "mtserve.v1.TranslateRequest", "beam")
    checks.error("a null among the texts (was dropped: two translations for three texts)",
                 call(port, "POST", "/v1/translate", '{"texts": ["a", null, "b"]}'),
                 400, "INVALID_ARGUMENT", "the request body: texts[1] is null")
    checks.error("an unknown model",
                 call(port, "POST", "/v1/translate", {"model": "no-such-model", "texts": ["a"]}),
                 404, "NOT_FOUND", "no-such-model", "is not served")
    checks.error("too many texts", call(port, "POST", "/v1/translate", {"texts": ["a"] * 9}),
                 400, "INVALID_ARGUMENT", "texts has 9 entries; the limit is 8",
                 "--max_texts_per_request")
    checks.error("a text over --max_text_bytes",
                 call(port, "POST", "/v1/translate", {"texts": ["a", "b" * 5000]}),
                 400, "INVALID_ARGUMENT", "texts[1]", "--max_text_bytes")
    checks.error("beam_size over the limit",
                 call(port, "POST", "/v1/translate",
                      {"texts": ["a"], "options": {"beam_size": 20}}),
                 400, "INVALID_ARGUMENT", "options.beam_size is 20; the limit is 16")
    checks.error("a body over --max_message_bytes",
                 call(port, "POST", "/v1/translate", {"texts": ["a " * 40000]}),
                 413, "RESOURCE_EXHAUSTED", "65536", "--max_message_bytes")
    checks.error("a deadline that passes (X-Request-Timeout: 0s)",
                 call(port, "POST", "/v1/translate", {"texts": lines},
                      headers={"X-Request-Timeout": "0s"}),
                 504, "DEADLINE_EXCEEDED")
    status, _, body = call(port, "POST", "/v1/translate", {"texts": lines[:1]},
                           headers={"X-Request-Timeout": "60s"})
    checks.expect("a deadline that does not pass: 200", status == 200, f"{status} {body!r}")
    checks.error("a timeout that is not a duration",
                 call(port, "POST", "/v1/translate", {"texts": ["a"]},
                      headers={"X-Request-Timeout": "soon"}),
                 400, "INVALID_ARGUMENT", "X-Request-Timeout")
    checks.error("HTML nested deeper than the limit",
                 call(port, "POST", "/v1/translate",
                      {"texts": ["<div>" * 600 + "A dog."], "options": {"format": "TEXT_FORMAT_HTML"}}),
                 400, "INVALID_ARGUMENT", "texts[0]: the HTML nests elements 600 deep; the limit is 512")
    checks.error("an element with more attributes than the limit",
                 call(port, "POST", "/v1/translate",
                      {"texts": ["<b" + "".join(f" a{i}" for i in range(300)) + ">A dog.</b>"],
                       "options": {"format": "TEXT_FORMAT_HTML"}}),
                 400, "INVALID_ARGUMENT",
                 "texts[0]: the HTML has an element with 300 attributes (the tag at byte 0); the "
                 "limit is 256")
    # A value takes tens of bytes of memory whatever its text: a 4 MiB body of "","",... took
    # 130 MiB before the bound.
    checks.error("more JSON values than the limit",
                 call(port, "POST", "/v1/translate", '{"texts": [' + ",".join(['""'] * 100) + "]}"),
                 400, "INVALID_ARGUMENT", "the request body is JSON of more than 72 values, the "
                 "limit (the server's --max_texts_per_request (8) plus 64)")
    checks.error("a stream line of more JSON values than the limit",
                 call(port, "POST", "/v1/translate:stream",
                      '{"text": "a"}\n{"text": "a", "x": [' + ",".join(["1"] * 100) + "]}\n"),
                 400, "INVALID_ARGUMENT", "line 2 of the request body is JSON of more than 72")
    checks.error("an unknown path", call(port, "GET", "/v2/nothing"), 404, "NOT_FOUND",
                 "/v1/translate")
    wrong = call(port, "GET", "/v1/translate")
    checks.error("a wrong method", wrong, 405, "UNIMPLEMENTED", "POST")
    checks.expect("405 says which method in Allow", wrong[1].get("Allow") == "POST",
                  f"{wrong[1]}")
    interim, head, answer = call_with_continue(port, "/v1/translate",
                                               {"texts": lines[:1], "options": {"beam_size": 4}})
    answered = json.loads(answer)["translations"][0]["hypotheses"][0]["text"] if (
        head.startswith("HTTP/1.1 200")) else None
    checks.expect("Expect: 100-continue gets 100 Continue, then the whole answer",
                  interim == "HTTP/1.1 100 Continue" and answered == expected[0]
                  and "Content-Type: application/json" in head,
                  f"{interim!r} {head!r} {answer[:300]!r}")
    refused = call(port, "POST", "/v1/models", {"texts": ["a"]})
    checks.error("a wrong method with a body", refused, 405, "UNIMPLEMENTED", "GET")
    checks.expect("a body left unread closes the connection (it is no next request)",
                  refused[1].get("Connection", "").lower() == "close", f"{refused[1]}")


def run_slow_client_checks(checks, server):
    port = server.http_port
    slow = []
    for _ in range(2):  # As many as --http_threads (a thread each, when connections held one).
        sent, closed = threading.Event(), threading.Event()
        thread = threading.Thread(target=slow_client, args=(port, sent, closed), daemon=True)
        thread.start()
        sent.wait(60)
        slow.append((thread, closed))
    status, _, body = call(port, "GET", "/v1/models", timeout=60)
    checks.expect("a request behind two slow clients is answered", status == 200,
                  f"{status} {body[:200]!r}")
    for thread, _ in slow:
        thread.join(70)
    checks.expect("slow clients are cut off by --http_timeout",
                  all(closed.is_set() for _, closed in slow))

    # A body that stops arriving.
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
                     b'{"texts": ')
        answer = b""
        while True:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    checks.expect("a body that stops arriving gets 408 and the connection closes",
                  answer.startswith(b"HTTP/1.1 408") and b"DEADLINE_EXCEEDED" in answer,
                  f"{answer[:300]!r}")


def run_metrics_checks(checks, server):
    text = server.metrics()
    frontends = set(re.findall(r'^mtserve_requests_total\{[^}]*frontend="([^"]*)"', text,
                               re.MULTILINE))
    checks.expect("the frontend label has the values grpc and http only",
                  frontends == {"grpc", "http"}, f"{frontends}")
    checks.expect("HTTP translations counted (frontend http, Translate, OK)",
                  requests_total(text, frontend="http", method="Translate", code="OK") >= 5)
    checks.expect("HTTP stream texts counted (frontend http, TranslateStream)",
                  requests_total(text, frontend="http", method="TranslateStream", code="OK") >= 3
                  and requests_total(text, frontend="http", method="TranslateStream",
                                     code="NOT_FOUND") == 1)
    checks.expect("HTTP refusals counted with model none (bad JSON, body over the limit)",
                  requests_total(text, frontend="http", model="none",
                                 code="INVALID_ARGUMENT") >= 3
                  and requests_total(text, frontend="http", model="none",
                                     code="RESOURCE_EXHAUSTED") == 1
                  and requests_total(text, frontend="http", code="DEADLINE_EXCEEDED") >= 2)
    checks.expect("gRPC translations counted with frontend grpc",
                  requests_total(text, frontend="grpc", method="Translate", code="OK") >= 1)


def run_drain_checks(checks, bin_dir, sentences):
    # A translation that takes a while on one worker: the whole file as one text.
    server = MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1", "--http_timeout=60s",
                            "--shutdown_grace=120s", "--cache_bytes=0")
    try:
        document = " ".join(sentences[:400])
        translating = server.terminate_during(
            lambda: call(server.http_port, "POST", "/v1/translate", {"texts": [document]},
                         timeout=300))
        ready = call(server.http_port, "GET", "/readyz")
        live = call(server.http_port, "GET", "/healthz")
        refused = call(server.http_port, "POST", "/v1/translate", {"texts": ["a"]})
        checks.expect("draining: /readyz 503 NOT_SERVING",
                      ready[0] == 503 and json.loads(ready[2])["status"] == "NOT_SERVING",
                      f"{ready[0]} {ready[2]!r}")
        checks.expect("draining: /healthz 200", live[0] == 200, f"{live[0]} {live[2]!r}")
        checks.error("draining: a new request", refused, 503, "UNAVAILABLE", "shutting down")
        translating.join(300)
        status, _, body = translating.result or (None, None, b"")
        text = json.loads(body)["translations"][0]["hypotheses"][0]["text"] if status == 200 else ""
        checks.expect("draining: the translation in flight is answered in full",
                      status == 200 and len(text) > len(document) // 2, f"{status} {body[:300]!r}")
        checks.expect("draining: mtserve exits 0", server.process.wait(timeout=120) == 0,
                      server.stderr())
    finally:
        server.stop()


if __name__ == "__main__":
    main()
