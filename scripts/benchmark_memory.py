#!/usr/bin/python3
"""What the worst request bodies cost in memory, front end by front end, as docs report it: for
each case a fresh mtserve (default limits: 4 MiB messages, 16 HTTP threads, 2 workers) is sent a
burst of 16 of the body at once, and its resident memory is read from /proc before (idle, after a
few normal requests), at its peak (VmHWM) and after the burst has been answered and a few normal
requests have followed (settled). Every body is refused or answered; nothing needs a key.

  http-empty-texts     /v1/translate {"texts":["","",...]}: a JSON value every 3 bytes
  http-deep-arrays     /v1/translate {"texts":[[[[...]]]]}: nesting to the body's end
  ndjson-lines         /v1/translate:stream, a line {"text":"a"} every 13 bytes
  lt-empty-texts       LibreTranslate /translate {"q":["","",...]}
  lt-deep-arrays       LibreTranslate /translate {"format":[[[[...]]]]}: nested to the end
  lt-form-fields       LibreTranslate /translate as a form: q=a&a1=&a2=&...: a field every 6 bytes
  grpc-empty-texts     gRPC Translate, texts = ["", "", ...]: a text every 2 bytes

Usage: scripts/benchmark_memory.py [BUILD_DIR] [CASE ...]   (after scripts/build.sh)
"""
import concurrent.futures
import http.client
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from mtserve_process import MtserveProcess  # noqa: E402

BODY_BYTES = 4 << 20  # --max_message_bytes' default: the largest body any front end reads.
BURST = 16  # --http_threads' default: HTTP requests parsed at once (as many more may wait whole).
SETTLE_SECONDS = 5


def fill(head, unit, tail):
    """head + unit repeated + tail, just under BODY_BYTES."""
    return head + unit * ((BODY_BYTES - len(head) - len(tail)) // len(unit)) + tail


def nested(head, tail):
    depth = (BODY_BYTES - len(head) - len(tail)) // 2
    return head + b"[" * depth + b"]" * depth + tail


CASES = {
    "http-empty-texts": ("/v1/translate", "application/json",
                         lambda: fill(b'{"texts":[""', b',""', b"]}")),
    "http-deep-arrays": ("/v1/translate", "application/json",
                         lambda: nested(b'{"texts":', b"}")),
    "ndjson-lines": ("/v1/translate:stream", "application/x-ndjson",
                     lambda: fill(b"", b'{"text":"a"}\n', b"")),
    "lt-empty-texts": ("/translate", "application/json",
                       lambda: fill(b'{"source":"en","target":"de","q":[""', b',""', b"]}")),
    "lt-deep-arrays": ("/translate", "application/json",
                       lambda: nested(b'{"q":"a","source":"en","target":"de","format":', b"}")),
    "lt-form-fields": ("/translate", "application/x-www-form-urlencoded",
                       lambda: b"q=a&source=en&target=de" + b"".join(
                           b"&a%d=" % i for i in range(BODY_BYTES // 9))),
    "grpc-empty-texts": ("grpc", None, None),
}


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def post(port, path, content_type, body):
    """The status, or the error that ended the exchange (the server may close after refusing)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        connection.request("POST", path, body, {"Content-Type": content_type})
        response = connection.getresponse()
        response.read()
        return str(response.status)
    except OSError as error:
        return type(error).__name__
    finally:
        connection.close()


def grpc_burst(server, build):
    sys.path.insert(0, os.path.join(build, "tests", "scripts", "python"))
    import grpc
    from mtserve.v1 import translation_pb2 as pb, translation_pb2_grpc as pb_grpc
    request = pb.TranslateRequest(texts=[b""] * ((BODY_BYTES - 64) // 2))
    channel = grpc.insecure_channel(
        f"127.0.0.1:{server.grpc_port}",
        options=[("grpc.max_send_message_length", 2 * BODY_BYTES)])
    stub = pb_grpc.TranslatorStub(channel)

    def one(_):
        try:
            stub.Translate(request, timeout=300)
            return "OK"
        except grpc.RpcError as error:
            return error.code().name
    with concurrent.futures.ThreadPoolExecutor(BURST) as pool:
        return list(pool.map(one, range(BURST)))


def run(case, build):
    path, content_type, make_body = CASES[case]
    mtserve = os.path.join(build, "bin", "mtserve")
    def normal_traffic():
        for _ in range(4):
            post(server.http_port, "/v1/translate", "application/json",
                 b'{"texts":["A man rides a bike."]}')
    with MtserveProcess(mtserve, "--workers=2") as server:
        normal_traffic()  # So that idle counts what serving at all holds.
        idle = rss_kib(server.pid, "VmRSS")
        if path == "grpc":
            outcomes = grpc_burst(server, build)
        else:
            body = make_body()
            with concurrent.futures.ThreadPoolExecutor(BURST) as pool:
                outcomes = list(pool.map(
                    lambda _: post(server.http_port, path, content_type, body), range(BURST)))
        peak = rss_kib(server.pid, "VmHWM")
        normal_traffic()  # Afterwards, then the memory that stays.
        time.sleep(SETTLE_SECONDS)
        settled = rss_kib(server.pid, "VmRSS")
    counts = {o: outcomes.count(o) for o in sorted(set(outcomes))}
    print(f"| {case} | {idle // 1024} | {peak // 1024} | {settled // 1024} | "
          f"{', '.join(f'{n}x {o}' for o, n in counts.items())} |", flush=True)


def main():
    args = sys.argv[1:]
    build = os.path.join(ROOT, "build")
    if args and args[0] not in CASES:
        build = args.pop(0)
    print(f"{BURST} bodies of {BODY_BYTES >> 20} MiB at once; resident memory in MiB")
    print("| case | idle | peak | settled | answers |")
    print("|---|---|---|---|---|")
    for case in args or CASES:
        run(case, build)


if __name__ == "__main__":
    main()
