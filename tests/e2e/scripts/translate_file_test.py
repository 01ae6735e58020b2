#!/usr/bin/env python3
"""gRPC's TranslateFile (docs/api.md, "Files") and `mtclient translate-file`, end to end:

- a Markdown file and a SubRip file sent in chunks come back equal to the unary Translate of the
  same text with their format, in chunks, after progress messages whose sentences done never pass
  the total, the last one DONE with the translated file's name and size;
- a file larger than one gRPC message (chunks totalling more than the server's
  --max_message_bytes) is translated whole;
- a file over --max_file_bytes is INVALID_ARGUMENT naming the flag and the limit, as soon as its
  bytes pass it; a .srt name on Markdown content is INVALID_ARGUMENT naming the file; a stream
  without a header, a chunk before the header and a second header are INVALID_ARGUMENT naming the
  header;
- cancelling a call mid-job leaves nothing in flight (the server's metrics), and the server
  translates the next file; a call whose deadline passes ends its job unfinished;
- with API keys, a file call without a good key is UNAUTHENTICATED; with one (mtclient's
  --api_key too) it is translated;
- SIGTERM with a file call under way: it is finished, and a new call is UNAVAILABLE;
- mtclient translate-file writes the same file as the unary Translate, its progress on stderr.

Usage: translate_file_test.py BIN_DIR STUBS_DIR TEST_SET [-- UNITTEST_ARGS]
"""
import hashlib
import os
import re
import subprocess
import sys
import threading

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary  # noqa: E402
from mtserve_process import wait_until  # noqa: E402

MARKDOWN = """# A dog on the beach

A dog runs on the beach. Two children play in the **water** near a `boat`.

- A boy jumps into the pool.
- A man in a red shirt reads a [book](https://example.com/book).

| Animal | Place |
|--------|-------|
| A black dog | In the *park* |
"""
SRT = (
    "1\n00:00:01,000 --> 00:00:03,000\nA man in a blue shirt\n\n"
    "2\n00:00:03,200 --> 00:00:05,000\nis standing on a ladder.\n\n"
    "3\n00:00:05,500 --> 00:00:07,000\nTwo young girls are playing in the park.\n"
)
# A file larger than the small server's --max_message_bytes (64 KiB), of few sentences: a code
# block, which comes back as written, around two paragraphs.
CODE_LINE = "    let x = compute(x, y) + 42;  // unchanged\n"
BIG_MARKDOWN = ("A woman is reading a book.\n\n```\n" + CODE_LINE.strip() + "\n" + CODE_LINE * 2000
                + "```\n\nTwo men are sitting on a bench.\n")
SMALL_MESSAGE_BYTES = 64 << 10
SMALL_FILE_BYTES = 256 << 10


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


def in_flight(server):
    """What the server's metrics count in flight: requests being translated, sentences queued,
    and file jobs held (a call deletes its job as it ends)."""
    text = server.metrics()
    return (e2e_suite.metric_total(text, "mtserve_in_flight_requests")
            + e2e_suite.metric_total(text, "mtserve_queue_depth")
            + e2e_suite.metric_total(text, "mtserve_file_jobs_held"))


def cancelled_jobs(server):
    return e2e_suite.metric_total(server.metrics(), "mtserve_file_jobs_total", result="cancelled")


def jobs_ended(server):
    """Jobs ended so far, by result (done, failed, cancelled)."""
    text = server.metrics()
    return {result: e2e_suite.metric_total(text, "mtserve_file_jobs_total", result=result)
            for result in ("done", "failed", "cancelled")}


class TranslateFileTest(e2e_suite.MtserveTestCase):
    server_flags = ("--workers=1",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.stub = cls.translator_stub(cls.server)
        # --max_message_bytes below the big file's size (and --max_text_bytes within it, as the
        # server requires), --max_file_bytes above it.
        cls.small = cls.start_class_mtserve(
            "--workers=1", f"--max_message_bytes={SMALL_MESSAGE_BYTES}",
            f"--max_text_bytes={SMALL_MESSAGE_BYTES // 2}",
            f"--max_file_bytes={SMALL_FILE_BYTES}")
        cls.small_stub = cls.translator_stub(cls.small)


    def unary(self, text, text_format):
        response = self.stub.Translate(
            pb.TranslateRequest(texts=[text.encode()], options=pb.DecodingOptions(format=text_format)),
            timeout=300)
        return response.translations[0].hypotheses[0].text

    @staticmethod
    def requests(header, content, chunk_bytes=16 << 10):
        yield pb.TranslateFileRequest(header=header)
        for offset in range(0, len(content), chunk_bytes):
            yield pb.TranslateFileRequest(chunk=content[offset:offset + chunk_bytes])

    def translate_file(self, stub, header, content, chunk_bytes=16 << 10):
        """(the FileJob messages, the translated file's bytes) of one call."""
        jobs, result = [], b""
        for response in stub.TranslateFile(self.requests(header, content, chunk_bytes),
                                           timeout=300):
            if response.HasField("job"):
                self.assertEqual(result, b"", "a job message after the file's bytes")
                jobs.append(response.job)
            else:
                result += response.chunk
        return jobs, result

    def assertProgress(self, jobs, result, file_name):
        self.assertTrue(jobs, "no progress message")
        for job in jobs:
            self.assertLessEqual(job.sentences_done, job.sentences_total, job)
            self.assertEqual(job.id, jobs[0].id)
        self.assertEqual([j.state for j in jobs].count(pb.FILE_JOB_STATE_DONE), 1)
        last = jobs[-1]
        self.assertEqual(last.state, pb.FILE_JOB_STATE_DONE)
        self.assertGreater(last.sentences_total, 0)
        self.assertEqual(last.sentences_done, last.sentences_total)
        self.assertEqual(last.file_name, file_name)
        self.assertEqual(last.result_bytes, len(result))

    def assertRefused(self, call, *needles):
        with self.assertRaises(grpc.RpcError) as caught:
            call()
        error = caught.exception
        self.assertEqual(error.code(), grpc.StatusCode.INVALID_ARGUMENT, error.details())
        for needle in needles:
            self.assertIn(needle, error.details())

    def test_markdown_equals_unary_translate(self):
        header = pb.FileHeader(file_name="beach.md")
        jobs, result = self.translate_file(self.stub, header, MARKDOWN.encode(), chunk_bytes=50)
        self.assertProgress(jobs, result, "beach.md")
        self.assertEqual(result.decode(), self.unary(MARKDOWN, pb.TEXT_FORMAT_MARKDOWN))
        self.assertTrue(jobs[-1].media_type.startswith("text/markdown"), jobs[-1].media_type)

    def test_srt_equals_unary_translate(self):
        header = pb.FileHeader(file_name="talk.srt", media_type="application/x-subrip")
        jobs, result = self.translate_file(self.stub, header, SRT.encode())
        self.assertProgress(jobs, result, "talk.srt")
        self.assertEqual(result.decode(), self.unary(SRT, pb.TEXT_FORMAT_SRT))

    def test_file_larger_than_a_message(self):
        content = BIG_MARKDOWN.encode()
        self.assertGreater(len(content), SMALL_MESSAGE_BYTES)
        self.assertLess(len(content), SMALL_FILE_BYTES)
        jobs, result = self.translate_file(self.small_stub, pb.FileHeader(file_name="code.md"),
                                           content)
        self.assertProgress(jobs, result, "code.md")
        self.assertEqual(result.decode(), self.unary(BIG_MARKDOWN, pb.TEXT_FORMAT_MARKDOWN))
        self.assertIn((CODE_LINE * 2000).encode(), result)

    def test_over_max_file_bytes(self):
        content = b"A dog runs. " * (SMALL_FILE_BYTES // 12 + 1)
        self.assertRefused(
            lambda: self.translate_file(self.small_stub, pb.FileHeader(file_name="dog.txt"),
                                        content),
            "--max_file_bytes", str(SMALL_FILE_BYTES))

    def test_format_mismatch_names_the_file(self):
        self.assertRefused(
            lambda: self.translate_file(self.stub, pb.FileHeader(file_name="talk.srt"),
                                        MARKDOWN.encode()),
            "talk.srt")

    def test_header_missing_or_twice(self):
        chunk = pb.TranslateFileRequest(chunk=b"A dog runs.")
        header = pb.TranslateFileRequest(header=pb.FileHeader(file_name="dog.txt"))
        for messages in ([chunk], [], [header, chunk, header]):
            with self.subTest(messages=len(messages)):
                self.assertRefused(
                    lambda: list(self.stub.TranslateFile(iter(messages), timeout=60)), "header")

    def test_cancel_mid_job_leaves_nothing_in_flight(self):
        with open(e2e_suite.ARGS.test_set, "rb") as f:
            content = f.read()  # A thousand sentences.
        cancelled_before = cancelled_jobs(self.server)
        call = self.stub.TranslateFile(
            self.requests(pb.FileHeader(file_name="flickr.txt"), content), timeout=300)
        running = None
        for response in call:
            self.assertTrue(response.HasField("job"))
            self.assertNotEqual(response.job.state, pb.FILE_JOB_STATE_DONE, "not cancelled in time")
            if response.job.sentences_done > 0:
                running = response.job
                break
        self.assertIsNotNone(running, "no progress before the call ended")
        self.assertLess(running.sentences_done, running.sentences_total)
        call.cancel()
        self.assertTrue(wait_until(lambda: in_flight(self.server) == 0
                                   and cancelled_jobs(self.server) == cancelled_before + 1),
                        "not cancelled, or still in flight:\n" + self.server.metrics())
        # The server goes on: the next file is translated.
        jobs, result = self.translate_file(self.stub, pb.FileHeader(file_name="after.md"),
                                           MARKDOWN.encode())
        self.assertProgress(jobs, result, "after.md")

    def test_calls_over_grpc_max_file_calls_are_refused(self):
        server = self.start_mtserve("--workers=1", "--grpc_max_file_calls=1")
        stub = self.translator_stub(server)
        small = (pb.FileHeader(file_name="cat.txt"), b"A cat sleeps.")

        def attempt():
            """A call held open after its header while a second is made: (the second's error or
            None, the first's messages or error). Which call the server takes first is its
            own affair: the second may come first, and then the first is the one refused."""
            release = threading.Event()

            def held_open():
                yield pb.TranslateFileRequest(header=pb.FileHeader(file_name="held.txt"))
                release.wait()
                yield pb.TranslateFileRequest(chunk=b"A dog runs.")

            held = stub.TranslateFile(held_open(), timeout=300)
            first = {}

            def follow():
                try:
                    first["messages"] = list(held)
                except grpc.RpcError as error:
                    first["error"] = error

            thread = threading.Thread(target=follow)
            thread.start()
            try:
                self.translate_file(stub, *small)
                second = None
            except grpc.RpcError as error:
                second = error
            finally:
                release.set()
                thread.join()
            return second, first

        outcomes = []
        self.assertTrue(wait_until(lambda: outcomes.append(attempt()) or outcomes[-1][0]),
                        "a second call was never refused")
        refusal, first = outcomes[-1]
        self.assertEqual(refusal.code(), grpc.StatusCode.RESOURCE_EXHAUSTED, refusal.details())
        self.assertIn("--grpc_max_file_calls", refusal.details())
        self.assertNotIn("error", first)
        states = [m.job.state for m in first["messages"] if m.HasField("job")]
        self.assertEqual(states[-1], pb.FILE_JOB_STATE_DONE)
        # Once it has ended, the next call is taken (the server frees the held call's place as
        # its handler returns, which may be just after the client saw the call end: refusals
        # until then are retried).
        def next_call_done():
            try:
                return self.translate_file(stub, *small)[0][-1].state == pb.FILE_JOB_STATE_DONE
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                return False
        self.assertTrue(wait_until(next_call_done), "the next call was never taken")

    def test_deadline_ends_the_job(self):
        with open(e2e_suite.ARGS.test_set, "rb") as f:
            content = f.read()  # A thousand sentences: far more than a second's work in beams.
        before = jobs_ended(self.server)
        header = pb.FileHeader(file_name="flickr.txt", options=pb.DecodingOptions(beam_size=8))
        with self.assertRaises(grpc.RpcError) as caught:
            list(self.stub.TranslateFile(self.requests(header, content), timeout=1))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)

        def ended_unfinished():
            after = jobs_ended(self.server)
            return (after["done"] == before["done"]
                    and after["failed"] + after["cancelled"]
                    == before["failed"] + before["cancelled"] + 1)
        self.assertTrue(wait_until(lambda: ended_unfinished() and in_flight(self.server) == 0),
                        "the job did not end unfinished:\n" + self.server.metrics())

    def test_mtclient_translate_file(self):
        directory = self.temp_dir()
        source, output = os.path.join(directory, "beach.md"), os.path.join(directory, "out.md")
        with open(source, "w", encoding="utf-8") as f:
            f.write(MARKDOWN)
        run = subprocess.run(
            [binary("mtclient"), "translate-file", source, f"--output={output}",
             f"--server=127.0.0.1:{self.server.grpc_port}"],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(output, encoding="utf-8") as f:
            self.assertEqual(f.read(), self.unary(MARKDOWN, pb.TEXT_FORMAT_MARKDOWN))
        progress = run.stderr.splitlines()
        self.assertTrue(progress[-1].startswith("done: beach.md, text/markdown"), run.stderr)
        for line in progress[:-1]:
            match = re.fullmatch(r"(queued|running) (\d+)/(\d+) sentences", line)
            self.assertIsNotNone(match, line)
            self.assertLessEqual(int(match.group(2)), int(match.group(3)), line)
        # A file the server refuses (Markdown claimed SubRip): exit status 1, its error on stderr.
        run = subprocess.run(
            [binary("mtclient"), "translate-file", source, "--format=srt",
             f"--server=127.0.0.1:{self.server.grpc_port}"],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertIn("error: INVALID_ARGUMENT: ", run.stderr)



class ApiKeyTest(e2e_suite.MtserveTestCase):
    """A server with --api_keys_file: a file call takes the key as the other calls do."""

    KEY = "files-" + os.urandom(16).hex()

    @classmethod
    def setUpClass(cls):
        keys = os.path.join(cls.class_temp_dir(), "keys")
        with open(keys, "w") as f:
            f.write(f"writer sha256:{hashlib.sha256(cls.KEY.encode()).hexdigest()}\n")
        cls.server_flags = ("--workers=1", f"--api_keys_file={keys}")
        super().setUpClass()
        cls.stub = cls.translator_stub()

    def call(self, metadata):
        return list(self.stub.TranslateFile(
            TranslateFileTest.requests(pb.FileHeader(file_name="a.srt"), SRT.encode()),
            metadata=metadata, timeout=300))

    def test_a_file_needs_a_key(self):
        for metadata in ((), (("authorization", "Bearer wrong"),)):
            with self.subTest(metadata=metadata):
                with self.assertRaises(grpc.RpcError) as caught:
                    self.call(metadata)
                self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        responses = self.call((("authorization", f"Bearer {self.KEY}"),))
        self.assertEqual([r.job.state for r in responses if r.HasField("job")][-1],
                         pb.FILE_JOB_STATE_DONE)

    def test_mtclient_sends_its_key(self):
        source = os.path.join(self.temp_dir(), "talk.srt")
        with open(source, "w", encoding="utf-8") as f:
            f.write(SRT)
        run = subprocess.run(
            [binary("mtclient"), "translate-file", source, f"--api_key={self.KEY}",
             f"--server=127.0.0.1:{self.server.grpc_port}"],
            capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("-->", run.stdout)



class DrainTest(e2e_suite.MtserveTestCase):
    """SIGTERM with a file call under way: it is finished, and a new one is UNAVAILABLE."""

    def test_a_file_under_way_is_finished(self):
        server = self.start_mtserve("--workers=1", "--shutdown_grace=300s")
        channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        self.addCleanup(channel.close)
        stub = pb_grpc.TranslatorStub(channel)
        with open(e2e_suite.ARGS.test_set, "rb") as f:
            content = f.read()

        def translate():
            responses = list(stub.TranslateFile(
                TranslateFileTest.requests(pb.FileHeader(file_name="flickr.txt"), content),
                timeout=300))
            return ([r.job for r in responses if r.HasField("job")],
                    b"".join(r.chunk for r in responses if not r.HasField("job")))

        translating = server.terminate_during(translate)  # Returns once it drains.
        with self.assertRaises(grpc.RpcError) as caught:
            list(stub.TranslateFile(TranslateFileTest.requests(
                pb.FileHeader(file_name="late.txt"), b"A dog runs."), timeout=60))
        self.assertEqual(caught.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertIn("shutting down", caught.exception.details())
        translating.join(300)
        self.assertIsNotNone(translating.result, "the file under way got no answer")
        jobs, result = translating.result
        self.assertEqual(jobs[-1].state, pb.FILE_JOB_STATE_DONE)
        self.assertEqual(jobs[-1].result_bytes, len(result))
        self.assertEqual(len(result.decode().splitlines()), len(content.decode().splitlines()))
        self.assertEqual(server.process.wait(timeout=120), 0)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "test_set")
