"""What the Python process-level suites (tests/e2e/scripts/) share: their command-line arguments,
one HTTP request on its own connection, the API's error shape as an assertion, what the HTTP
suites read from answers and metrics, and a unittest.TestCase that starts mtserve once per class
or once per test.

A suite is a script of unittest.TestCase classes ending with
`e2e_suite.main(__doc__, ARGUMENT...)`: its own arguments (BIN_DIR and the like, as ctest passes
them) come first, then, after `--`, unittest's (a test's name, -k PATTERN, -f). The tests read
their arguments from `e2e_suite.ARGS`. This module puts scripts/lib (mtserve_process.py) on the
import path."""
import argparse
import http.client
import json
import os
import re
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts/lib"))
from mtserve_process import MtserveProcess  # noqa: E402

# The suite's arguments (an argparse.Namespace), set by main() before any test runs.
ARGS = None


def main(doc, *arguments):
    """Reads the suite's arguments into ARGS and runs its tests (unittest.main, verbose).
    `arguments` are argparse positional specifications: "bin_dir", or ("seconds", {"nargs": "?",
    "type": int, "default": 150}). Everything after `--` goes to unittest."""
    global ARGS
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    ours, rest = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Arguments after -- go to unittest: a test's name (Class or Class.test_method), "
               "-k PATTERN, -f; `-- -h` lists them.")
    for argument in arguments:
        name, options = (argument, {}) if isinstance(argument, str) else argument
        parser.add_argument(name, **options)
    ARGS = parser.parse_args(ours)
    unittest.main(module="__main__", argv=[sys.argv[0], *rest], verbosity=2)


def binary(name):
    """The path of a binary of the build (mtserve, mttranslate, mtclient...) in ARGS.bin_dir."""
    return os.path.join(ARGS.bin_dir, name)


def grpc_stubs():
    """(grpc, translation_pb2, translation_pb2_grpc): gRPC and the service's Python stubs, generated
    into the build tree (ARGS.stubs_dir); for a suite's setUpModule."""
    if ARGS.stubs_dir not in sys.path:
        sys.path.insert(0, ARGS.stubs_dir)
    import grpc
    from mtserve.v1 import translation_pb2, translation_pb2_grpc
    return grpc, translation_pb2, translation_pb2_grpc


def module_temp_dir(name):
    """A temporary directory for the suite's module (certificates made in setUpModule), removed
    after its tests."""
    directory = tempfile.TemporaryDirectory(prefix=f"mtserve_{name}_")
    unittest.addModuleCleanup(directory.cleanup)
    return directory.name


def call(port, method, path, body=None, headers=None, timeout=120):
    """(status, headers, body bytes) of one request on a new connection; a dict or list body is
    sent as JSON."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def post_json(port, path, body, headers=None):
    """call() with `body` as JSON."""
    return call(port, "POST", path, json.dumps(body),
                {"Content-Type": "application/json", **(headers or {})})


def post_form(port, path, fields, headers=None):
    """call() with `fields` URL-encoded: a dict, or a list of pairs (a name repeated)."""
    return call(port, "POST", path, urllib.parse.urlencode(fields),
                {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})


def parse_json(result):
    """The JSON body of a call() result, or None if it is not JSON."""
    try:
        return json.loads(result[2])
    except ValueError:
        return None


def native_translations(port, texts, **options):
    """The `translations` of the native API's /v1/translate for `texts` with `options`, for
    suites that compare another API's answers with it."""
    status, _, body = post_json(port, "/v1/translate", {"texts": texts, "options": options})
    if status != 200:
        raise RuntimeError(f"/v1/translate: {status} {body[:300]!r}")
    return json.loads(body)["translations"]


def metric_series(text, metric, **labels):
    """The series of `metric` with these labels in a /metrics scrape, each as (its labels, its
    value); [] when none is exported."""
    found = []
    for match in re.finditer(rf"^{re.escape(metric)}\{{([^}}]*)\}} (\S+)$", text, re.MULTILINE):
        series = dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))
        if all(series.get(k) == v for k, v in labels.items()):
            found.append((series, float(match.group(2))))
    return found


def metric_total(text, metric, **labels):
    """The sum of `metric` in a /metrics scrape over the series with these labels."""
    return sum((value for _, value in metric_series(text, metric, **labels)), 0.0)


def requests_total(text, **labels):
    """The sum of mtserve_requests_total over the series with these labels."""
    return metric_total(text, "mtserve_requests_total", **labels)


def nonblank_lines(path):
    """The lines of a UTF-8 text file (the Multi30k test set), stripped, blank ones left out."""
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def first_translation(result):
    """The best hypothesis of the first text of a /v1/translate answer (a result from call, or
    None), or None unless the answer is 200."""
    if result is None or result[0] != 200:
        return None
    return json.loads(result[2])["translations"][0]["hypotheses"][0]["text"]


def answer_while_queue_full(server, sentences, send, attempts=5):
    """What send() (a call) returns when made while the server's queue is full, else its last
    answer. For a server with --max_texts_per_request=8 --max_queued_texts=16 --max_batch_size=1:
    two requests of 8 texts of 16 sentences each (from `sentences`, past the hundredth), sent on
    threads with X-Request-Timeout 5s, fill the queue (16 sentences) and leave 16 texts waiting
    for room (--max_queued_texts counts both); send() goes once the queue depth holds more than
    one request's 128 sentences. Tried until send() is answered 429 (the requests may have left
    the queue in between), at most `attempts` times."""
    texts = [" ".join(sentences[100 + i:116 + i]) for i in range(8)]
    answer = None
    for _ in range(attempts):
        threads = [threading.Thread(target=call, args=(server.http_port, "POST", "/v1/translate",
                                                       {"texts": texts},
                                                       {"X-Request-Timeout": "5s"}), daemon=True)
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60  # Only keeps a broken server from hanging the test.
        while time.monotonic() < deadline and any(t.is_alive() for t in threads):
            depth = re.search(r"^mtserve_queue_depth\{[^}]*\} (\d+)", server.metrics(),
                              re.MULTILINE)
            if depth and int(depth.group(1)) > 140:
                break
            time.sleep(0.005)
        answer = send()
        for thread in threads:
            thread.join(120)
        if answer[0] == 429:
            break
    return answer


def error_answer_problem(result, status, code, *needles):
    """None if `result` (from call) is the API's error answer: this HTTP status, Content-Type
    application/json, a JSON object of exactly {"code", "message"} with this code and a message
    holding every needle; otherwise what it is instead."""
    got_status, headers, body = result
    try:
        error = json.loads(body)
    except ValueError:
        error = None
    good = (got_status == status and headers.get("Content-Type") == "application/json"
            and isinstance(error, dict) and set(error) == {"code", "message"}
            and error["code"] == code and all(n in error["message"] for n in needles))
    return None if good else (f"got {got_status} {headers.get('Content-Type')} {body[:400]!r}, "
                              f"want {status} {code} with a message holding {needles}")


class MtserveTestCase(unittest.TestCase):
    """A TestCase with mtserve at hand. A class that sets `server_flags` (a tuple of flags) gets
    one mtserve for all its tests, started in setUpClass: `cls.server`, a MtserveProcess on
    loopback ports the kernel chooses, serving. A test that needs a server state of its own (a
    quota used up, a signal sent) starts one with start_mtserve(); both are stopped after their
    class or test. Temporary directories likewise, with class_temp_dir() and temp_dir()."""

    server_flags = None
    server = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if cls.server_flags is not None:
            cls.server = cls.start_class_mtserve(*cls.server_flags)

    @classmethod
    def translator_stub(cls, server=None):
        """A gRPC Translator stub on `server`'s port (the class's server by default), its channel
        closed after the class's tests."""
        grpc, _, pb_grpc = grpc_stubs()
        channel = grpc.insecure_channel(f"127.0.0.1:{(server or cls.server).grpc_port}")
        cls.addClassCleanup(channel.close)
        return pb_grpc.TranslatorStub(channel)

    @classmethod
    def start_class_mtserve(cls, *flags, **options):
        server = MtserveProcess(binary("mtserve"), *flags, **options)
        cls.addClassCleanup(server.stop)
        return server

    def start_mtserve(self, *flags, **options):
        server = MtserveProcess(binary("mtserve"), *flags, **options)
        self.addCleanup(server.stop)
        return server

    @classmethod
    def class_temp_dir(cls):
        directory = tempfile.TemporaryDirectory(prefix=f"mtserve_{cls.__name__}_")
        cls.addClassCleanup(directory.cleanup)
        return directory.name

    def temp_dir(self):
        directory = tempfile.TemporaryDirectory(prefix=f"mtserve_{type(self).__name__}_")
        self.addCleanup(directory.cleanup)
        return directory.name

    def assertErrorAnswer(self, result, status, code, *needles):
        """`result` (from call) is the API's error answer with this status and code, its message
        holding every needle (error_answer_problem)."""
        problem = error_answer_problem(result, status, code, *needles)
        if problem is not None:
            self.fail(problem)
