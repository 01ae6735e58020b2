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

Usage: api_keys_test.py BIN_DIR STUBS_DIR
"""
import hashlib
import json
import os
import re
import signal
import sys
import tempfile
import time
import urllib.parse

# The shared helpers (without writing bytecode into the source tree).
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import Checks, call  # noqa: E402
from mtserve_process import MtserveProcess, wait_until  # noqa: E402

TEXT = "A man is riding a bike."  # 23 characters.
KEYS = {name: f"{name}-{os.urandom(16).hex()}" for name in
        ("alice", "limited", "wordy", "dave")}



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


def bearer(name):
    return {"Authorization": f"Bearer {KEYS[name]}"}


def main():
    checks = Checks()
    bin_dir, stubs_dir = sys.argv[1:3]
    sys.path.insert(0, stubs_dir)
    import grpc
    from mtserve.v1 import translation_pb2 as pb
    from mtserve.v1 import translation_pb2_grpc as pb_grpc

    with tempfile.TemporaryDirectory(prefix="mtserve_keys_") as tmp:
        keys_path = os.path.join(tmp, "keys.txt")
        write_keys(keys_path, "# test keys\n" + key_line("alice") +
                   key_line("limited", "requests_per_minute=2") +
                   key_line("wordy", "characters_per_day=30"))
        with MtserveProcess(os.path.join(bin_dir, "mtserve"), "--workers=1",
                            f"--api_keys_file={keys_path}",
                            "--reload_interval=1s") as server:
            port = server.grpc_port
            http_port = server.http_port
            channel = grpc.insecure_channel(f"127.0.0.1:{port}")
            stub = pb_grpc.TranslatorStub(channel)
            request = pb.TranslateRequest(texts=[TEXT.encode()])

            def grpc_code(call, *args, metadata=None):
                try:
                    call(*args, timeout=60, metadata=metadata)
                    return grpc.StatusCode.OK, None
                except grpc.RpcError as e:
                    return e.code(), e

            def stream_code(metadata=None):
                try:
                    answers = list(stub.TranslateStream(
                        iter([pb.TranslateStreamRequest(id="1", text=TEXT.encode())]),
                        timeout=60, metadata=metadata))
                    return grpc.StatusCode.OK, answers
                except grpc.RpcError as e:
                    return e.code(), e

            alice = [("authorization", f"Bearer {KEYS['alice']}")]
            # gRPC: authentication.
            code, error = grpc_code(stub.Translate, request)
            checks.expect(f"gRPC Translate without a key: {code}",
                          code == grpc.StatusCode.UNAUTHENTICATED and "API key is required" in
                  error.details())
            code, _ = grpc_code(stub.Translate, request,
                                metadata=[("authorization", "Bearer not-a-key")])
            checks.expect(f"gRPC Translate, unknown key: {code}",
                          code == grpc.StatusCode.UNAUTHENTICATED)
            code, _ = grpc_code(stub.Translate, request, metadata=alice)
            checks.expect(f"gRPC Translate, Bearer key: {code}",
                          code == grpc.StatusCode.OK)
            code, _ = grpc_code(stub.Translate, request, metadata=[("x-api-key", KEYS["alice"])])
            checks.expect(f"gRPC Translate, x-api-key: {code}",
                          code == grpc.StatusCode.OK)
            code, _ = grpc_code(stub.ListModels, pb.ListModelsRequest())
            checks.expect(f"gRPC ListModels without a key: {code}",
                          code == grpc.StatusCode.UNAUTHENTICATED)
            code, _ = grpc_code(stub.ListModels, pb.ListModelsRequest(), metadata=alice)
            checks.expect(f"gRPC ListModels with a key: {code}",
                          code == grpc.StatusCode.OK)
            code, _ = stream_code()
            checks.expect(f"gRPC TranslateStream, no key: {code}",
                          code == grpc.StatusCode.UNAUTHENTICATED)
            code, answers = stream_code(metadata=alice)
            checks.expect(f"gRPC TranslateStream with a key: {code}",
                          code == grpc.StatusCode.OK and answers[0].HasField("translation"))
            health = os.path.join(bin_dir, "mtclient")
            checks.expect("gRPC health needs no key",
                          os.system(f"{health} health --server=127.0.0.1:{port} >/dev/null") == 0)

            # gRPC: requests per minute (2): the third request at once is refused.
            limited = [("authorization", f"Bearer {KEYS['limited']}")]
            codes = [grpc_code(stub.Translate, request, metadata=limited) for _ in range(3)]
            checks.expect("gRPC: requests within the per-minute limit pass",
                          [c for c, _ in codes[:2]] == [grpc.StatusCode.OK] * 2)
            code, error = codes[2]
            retry = dict(error.trailing_metadata() or ()).get("retry-after") if error else None
            checks.expect(f"gRPC over the per-minute limit: {code}, retry-after {retry}, "
                  f"{error.details() if error else ''!r}",
                          code == grpc.StatusCode.RESOURCE_EXHAUSTED and
                  "2 requests per minute" in error.details() and retry is not None and
                  1 <= int(retry) <= 30 and f"retry in {retry} s" in error.details())

            # HTTP.
            status, headers, body = translate_http(http_port)
            checks.expect(f"HTTP /v1/translate without a key: {status} {body!r}",
                          status == 401 and json.loads(body)["code"] == "UNAUTHENTICATED" and
                  headers.get("WWW-Authenticate") == "Bearer")
            status, _, _ = translate_http(http_port, {"Authorization": "Bearer wrong"})
            checks.expect(f"HTTP, unknown key: {status}",
                          status == 401)
            status, _, body = translate_http(http_port, bearer("alice"))
            checks.expect(f"HTTP, Bearer key: {status} {body!r}",
                          status == 200)
            status, _, _ = translate_http(http_port, {"X-API-Key": KEYS["alice"]})
            checks.expect(f"HTTP, X-API-Key: {status}",
                          status == 200)
            status, _, _ = call(http_port, "GET", "/v1/models")
            checks.expect(f"HTTP /v1/models without a key: {status}",
                          status == 401)
            status, _, _ = call(http_port, "GET", "/v1/models", headers=bearer("alice"))
            checks.expect(f"HTTP /v1/models with a key: {status}",
                          status == 200)
            stream_body = json.dumps({"id": "1", "text": TEXT}) + "\n"
            status, _, _ = call(http_port, "POST", "/v1/translate:stream", stream_body)
            checks.expect(f"HTTP stream without a key: {status}",
                          status == 401)
            status, _, body = call(http_port, "POST", "/v1/translate:stream", stream_body,
                                        bearer("alice"))
            checks.expect(f"HTTP stream with a key: {status}",
                          status == 200 and b'"translation"' in body)
            for path in ("/healthz", "/readyz", "/openapi.json", "/languages",
                         "/frontend/settings"):
                status, _, _ = call(http_port, "GET", path)
                checks.expect(f"HTTP {path} needs no key: {status}",
                              status == 200)
            status, headers, body = translate_http(http_port, bearer("limited"))
            retry = headers.get("Retry-After")
            checks.expect(f"HTTP over the per-minute limit: {status}, Retry-After {retry}",
                          status == 429 and retry is not None and 1 <= int(retry) <= 30 and
                  json.loads(body)["code"] == "RESOURCE_EXHAUSTED")

            # Characters per day (30): 23, then 23 more is over; 31 at once never fits.
            wordy = {"X-API-Key": KEYS["wordy"]}
            status, _, _ = translate_http(http_port, wordy)
            checks.expect("HTTP within the characters per day",
                          status == 200)
            status, headers, body = translate_http(http_port, wordy)
            message = json.loads(body)["message"]
            seconds_to_midnight = 86400 - int(time.time()) % 86400
            checks.expect(f"HTTP over the characters per day: {status} {message!r} "
                  f"Retry-After {headers.get('Retry-After')}",
                          status == 429 and "has used 23 of its 30 characters today" in message and
                  abs(int(headers.get("Retry-After", -1)) - seconds_to_midnight) <= 60)
            status, _, body = call(
                http_port, "POST", "/v1/translate", json.dumps({"texts": ["x" * 31]}), wordy)
            checks.expect(f"HTTP, more characters than a day allows: {status} {body!r}",
                          status == 400 and "may send 30 a day" in json.loads(body)["message"])

            # LibreTranslate: api_key field, 403 {"error"} without or with a wrong one.
            form = {"q": TEXT, "source": "en", "target": "de"}
            status, _, body = call(http_port, "POST", "/translate",
                                        json.dumps({**form, "api_key": KEYS["alice"]}),
                                        {"Content-Type": "application/json"})
            checks.expect(f"LibreTranslate with api_key: {status} {body!r}",
                          status == 200 and "translatedText" in json.loads(body))
            status, _, body = call(
                http_port, "POST", "/translate",
                urllib.parse.urlencode({**form, "api_key": KEYS["alice"]}),
                {"Content-Type": "application/x-www-form-urlencoded"})
            checks.expect(f"LibreTranslate form with api_key: {status} {body!r}",
                          status == 200)
            for extra in ({}, {"api_key": "wrong"}):
                status, _, body = call(http_port, "POST", "/translate",
                                            json.dumps({**form, **extra}),
                                            {"Content-Type": "application/json"})
                checks.expect(f"LibreTranslate with {extra or 'no key'}: {status} {body!r}",
                              status == 403 and list(json.loads(body)) == ["error"])
            status, _, body = call(http_port, "POST", "/translate", json.dumps(form),
                                        {"Content-Type": "application/json", **bearer("alice")})
            checks.expect(f"LibreTranslate with a Bearer header: {status}",
                          status == 200)
            settings = json.loads(call(http_port, "GET", "/frontend/settings")[2])
            checks.expect(f"/frontend/settings says keys are required: {settings}",
                          settings["apiKeys"] is True and settings["keyRequired"] is True)

            # Metrics by key name.
            metrics = call(server.metrics_port, "GET", "/metrics")[2].decode()
            counts = {}
            for line in metrics.splitlines():
                match = re.match(r'mtserve_api_key_requests_total\{code="(\w+)",key="([\w.-]+)"\}'
                                 r' (\S+)', line)
                if match:
                    counts[(match.group(2), match.group(1))] = float(match.group(3))
            checks.expect(f"metrics count calls by key name: {counts}",
                          counts.get(("limited", "OK")) == 2 and
                  counts.get(("limited", "RESOURCE_EXHAUSTED")) == 2 and
                  counts.get(("none", "UNAUTHENTICATED"), 0) >= 5 and
                  counts.get(("unknown", "UNAUTHENTICATED"), 0) >= 3)

            # Reloading: SIGHUP, a broken file, polling.
            code, _ = grpc_code(stub.Translate, request,
                                metadata=[("x-api-key", KEYS["dave"])])
            checks.expect("dave is not a key yet",
                          code == grpc.StatusCode.UNAUTHENTICATED)
            write_keys(keys_path, key_line("alice") + key_line("dave"))
            server.process.send_signal(signal.SIGHUP)

            def dave_works():
                return grpc_code(stub.Translate, request,
                                 metadata=[("x-api-key", KEYS["dave"])])[0] == grpc.StatusCode.OK
            checks.expect("a key added to the file works after SIGHUP",
                          wait_until(dave_works))
            write_keys(keys_path, key_line("alice") + "dave sha256:123\n")
            server.process.send_signal(signal.SIGHUP)
            checks.expect("a broken keys file is logged with its line",
                          wait_until(lambda: "line 2: the key of \"dave\" is not sha256:" in
                            server.stderr()))
            checks.expect("a broken keys file keeps the previous keys",
                          dave_works())
            write_keys(keys_path, key_line("alice"))  # No signal: polling.
            checks.expect("a key removed stops working (polling)",
                          wait_until(lambda: not dave_works()))

            log = server.stderr()
            checks.expect("no key appears in the log or the metrics",
                          not any(key in log or key in metrics for key in KEYS.values()))
            channel.close()

    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0



if __name__ == "__main__":
    sys.exit(main())
