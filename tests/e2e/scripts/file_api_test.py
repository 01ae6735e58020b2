#!/usr/bin/env python3
"""The HTTP file API (POST /v1/translate_file, GET and DELETE /v1/jobs/{id}, GET
/v1/jobs/{id}/result) and LibreTranslate's (POST /translate_file, GET /download_file/{id}/{name},
/frontend/settings) against a real mtserve on ports the kernel chooses. Forms are written by
urllib3's encode_multipart_formdata (Debian's python3-urllib3, code nobody here wrote).

- A Markdown file and a SubRip file, uploaded, become jobs that end DONE; each one's result is
  the bytes /v1/translate gives for the same text in that format, with the format's media type
  (RFC 7763's text/markdown, application/x-subrip) and an attachment named as the file was
  (Content-Disposition's RFC 8187 filename*, decoded by urllib, and an ASCII filename).
- An unknown job is 404 on every route; a result asked for before its job is done is 409 naming
  the job's state (skipped when the job wins the race); DELETE cancels a running job, and the job
  is gone after it.
- A file over --max_file_bytes is refused (400 by the job's check, 413 by the transport when the
  body is past the file's limit and the form's), naming the flag; a .srt name on content that is
  not SubRip names the file; a form without its `file` part names the part.
- LibreTranslate's /translate_file answers once the file is translated, with an absolute URL from
  the request's Host whose download is the same translation; its errors are {"error"} as
  LibreTranslate's; /frontend/settings says files are translated, and which.

Usage: file_api_test.py BIN_DIR [-- UNITTEST_ARGS]
"""
import json
import os
import re
import sys
import time
import unittest
import urllib.parse

from urllib3.filepost import encode_multipart_formdata

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402

MARKDOWN = """# A dog on the beach

A dog runs on the beach. Two children play in the **water** near a `boat`.

- A boy jumps into the pool.
- A woman is sitting on a [bench](https://example.com/bench).
"""
SRT = (
    "1\n00:00:01,000 --> 00:00:03,000\nA man in a blue shirt\n\n"
    "2\n00:00:03,200 --> 00:00:05,000\nis standing on a ladder.\n\n"
    "3\n00:00:05,500 --> 00:00:07,000\nTwo young girls are playing in the park.\n"
)
# A file long enough that its job is still running when the next request comes, on a server
# with --max_batch_size=1 (not relied on: assertions that need it are skipped when it is done).
SENTENCES = ["A man in a blue shirt is standing on a ladder.",
             "Two young girls are playing in the park.",
             "A black dog runs through the snow.",
             "A woman is reading a book on a bench."]
LONG_TEXT = "\n\n".join(" ".join(SENTENCES[(i + k) % 4] for k in range(4)) for i in range(60))
FINAL = {"FILE_JOB_STATE_DONE", "FILE_JOB_STATE_FAILED", "FILE_JOB_STATE_CANCELLED"}


def form(fields):
    """(body, Content-Type) of a multipart/form-data body: `fields` maps a part's name to a value
    or to (file name, bytes, media type), as urllib3 takes them."""
    body, content_type = encode_multipart_formdata(fields)
    return body, content_type


def upload(port, fields, path="/v1/translate_file", headers=None):
    body, content_type = form(fields)
    return call(port, "POST", path, body, {"Content-Type": content_type, **(headers or {})})


def json_body(result):
    try:
        return json.loads(result[2])
    except ValueError:
        return None


def disposition(header):
    """(its type, the file name) of a Content-Disposition header as RFC 6266 reads it: an
    attachment whose filename* (RFC 8187: UTF-8, percent-encoded attr-chars, decoded here by
    urllib) wins over its filename, which must be a printable ASCII stand-in."""
    match = re.fullmatch(r'(\w+); filename="([\x20-\x7e]*)"; '
                         r"filename\*=UTF-8''([-!#$&+.^_`|~0-9A-Za-z%]*)", header or "")
    if match is None or '"' in match.group(2):
        return header, None
    return match.group(1), urllib.parse.unquote(match.group(3), errors="strict")


class FileApiTestCase(e2e_suite.MtserveTestCase):
    def submit(self, port, name, content, media_type="application/octet-stream", **parts):
        """A file submitted: its FileJob (the answer checked: 202, Location)."""
        result = upload(port, {"file": (name, content.encode(), media_type), **parts})
        self.assertEqual(result[0], 202, result[2][:400])
        job = json_body(result)
        self.assertEqual(result[1].get("Location"), f"/v1/jobs/{job['id']}")
        self.assertEqual(result[1].get("Content-Type"), "application/json")
        return job

    def wait_done(self, port, job_id):
        """Polls the job until it is final (bounded, so that a broken server fails rather than
        hangs); its last FileJob."""
        for _ in range(6000):
            status, _, body = call(port, "GET", f"/v1/jobs/{job_id}")
            self.assertEqual(status, 200, body[:400])
            job = json.loads(body)
            self.assertEqual(job["id"], job_id)
            if job["state"] in FINAL:
                return job
            time.sleep(0.05)
        self.fail(f"job {job_id} did not end")

    def native(self, port, text, format_name):
        status, _, body = call(port, "POST", "/v1/translate",
                               {"texts": [text], "options": {"format": format_name}})
        self.assertEqual(status, 200, body[:400])
        return json.loads(body)["translations"][0]["hypotheses"][0]["text"]


class FileApiTest(FileApiTestCase):
    server_flags = ("--workers=1",)

    def round_trip(self, name, content, format_name, media_type):
        port = self.server.http_port
        job = self.submit(port, name, content)
        self.assertIn(job["state"], {"FILE_JOB_STATE_QUEUED", "FILE_JOB_STATE_RUNNING",
                                     "FILE_JOB_STATE_DONE"})
        done = self.wait_done(port, job["id"])
        self.assertEqual(done["state"], "FILE_JOB_STATE_DONE", done)
        self.assertEqual(done["result_url"], f"/v1/jobs/{job['id']}/result")
        self.assertEqual(done["file_name"], name)
        self.assertGreater(int(done["sentences_total"]), 0)
        self.assertEqual(done["sentences_done"], done["sentences_total"])
        status, headers, body = call(port, "GET", done["result_url"])
        self.assertEqual(status, 200, body[:400])
        expected = self.native(port, content, format_name)
        self.assertEqual(body.decode("utf-8"), expected)
        self.assertNotEqual(body.decode("utf-8"), content)
        self.assertEqual(int(done["result_bytes"]), len(body))
        self.assertEqual(headers.get("Content-Type").split(";")[0].strip(), media_type)
        self.assertEqual(disposition(headers.get("Content-Disposition")), ("attachment", name))
        return job["id"]

    def test_a_markdown_file_is_translated_as_markdown(self):
        self.round_trip("dogs.md", MARKDOWN, "TEXT_FORMAT_MARKDOWN", "text/markdown")

    def test_a_subrip_file_is_translated_as_subrip(self):
        self.round_trip("film.srt", SRT, "TEXT_FORMAT_SRT", "application/x-subrip")

    def test_a_name_outside_ascii_is_given_back_in_filename_star(self):
        # "é" and a space: the plain filename gets a stand-in, filename* the name itself.
        job_id = self.round_trip("les chiens é.md", MARKDOWN, "TEXT_FORMAT_MARKDOWN",
                                 "text/markdown")
        _, headers, _ = call(self.server.http_port, "GET", f"/v1/jobs/{job_id}/result")
        self.assertIn("filename*=UTF-8''les%20chiens%20%C3%A9.md",
                      headers.get("Content-Disposition"))

    def test_an_unknown_job_is_404_on_every_route(self):
        port = self.server.http_port
        for method, path in [("GET", "/v1/jobs/nosuchjob"), ("GET", "/v1/jobs/nosuchjob/result"),
                             ("DELETE", "/v1/jobs/nosuchjob"),
                             ("GET", "/download_file/nosuchjob/a.md")]:
            result = call(port, method, path)
            self.assertEqual(result[0], 404, (method, path, result[2][:300]))

    def test_a_deleted_job_is_gone(self):
        port = self.server.http_port
        job = self.submit(port, "dogs.md", MARKDOWN)
        self.wait_done(port, job["id"])
        status, _, body = call(port, "DELETE", f"/v1/jobs/{job['id']}")
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(json.loads(body)["state"], "FILE_JOB_STATE_DONE")
        self.assertEqual(call(port, "GET", f"/v1/jobs/{job['id']}")[0], 404)
        self.assertEqual(call(port, "GET", f"/v1/jobs/{job['id']}/result")[0], 404)

    def test_a_form_without_its_file_part_names_the_part(self):
        result = upload(self.server.http_port, {"target_language": "de"})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "\"file\"")

    def test_an_unknown_part_is_refused_naming_it(self):
        result = upload(self.server.http_port,
                        {"file": ("a.txt", b"A dog runs.", "text/plain"), "colour": "blue"})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "\"colour\"")

    def test_a_body_that_is_not_a_form_is_refused(self):
        result = call(self.server.http_port, "POST", "/v1/translate_file", {"file": "x"},
                      {"Content-Type": "application/json"})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "multipart/form-data")

    def test_a_name_its_content_contradicts_is_refused_naming_the_file(self):
        result = upload(self.server.http_port,
                        {"file": ("film.srt", b"A dog runs on the beach.\n", "text/plain")})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "film.srt")

    def test_a_format_part_its_content_contradicts_is_refused(self):
        result = upload(self.server.http_port,
                        {"file": ("notes", b"A dog runs on the beach.\n", "text/plain"),
                         "format": "srt"})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "srt")

    def test_options_that_are_not_decoding_options_name_the_part(self):
        result = upload(self.server.http_port,
                        {"file": ("a.txt", b"A dog runs.", "text/plain"),
                         "options": '{"beam": 2}'})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "options")

    def test_the_job_routes_take_their_methods_only(self):
        result = call(self.server.http_port, "POST", "/v1/jobs/abc")
        self.assertEqual(result[0], 405)
        self.assertEqual(result[1].get("Allow"), "GET, DELETE")


class UnfinishedJobTest(FileApiTestCase):
    # One sentence a batch: a long file takes many batches.
    server_flags = ("--workers=1", "--max_batch_size=1")

    def test_a_result_before_its_job_is_done_is_409_naming_its_state(self):
        port = self.server.http_port
        job = self.submit(port, "long.txt", LONG_TEXT)
        result = call(port, "GET", f"/v1/jobs/{job['id']}/result")
        if result[0] == 200:
            self.skipTest("the job was done before its result was asked for")
        error = json_body(result)
        self.assertEqual(result[0], 409, result[2][:300])
        self.assertEqual(error["code"], "FAILED_PRECONDITION")
        self.assertTrue("queued" in error["message"] or "running" in error["message"], error)
        call(port, "DELETE", f"/v1/jobs/{job['id']}")

    def test_delete_cancels_a_running_job(self):
        port = self.server.http_port
        job = self.submit(port, "long.txt", LONG_TEXT)
        status, _, body = call(port, "DELETE", f"/v1/jobs/{job['id']}")
        self.assertEqual(status, 200, body[:300])
        ended = json.loads(body)
        if ended["state"] == "FILE_JOB_STATE_DONE":
            self.skipTest("the job was done before it was deleted")
        self.assertEqual(ended["state"], "FILE_JOB_STATE_CANCELLED", ended)
        self.assertEqual(ended["error"]["code"], 1)  # CANCELLED
        self.assertEqual(call(port, "GET", f"/v1/jobs/{job['id']}")[0], 404)
        # The server goes on translating.
        self.assertEqual(self.native(port, "A dog runs.", "TEXT_FORMAT_PLAIN") != "", True)


class FileLimitTest(FileApiTestCase):
    server_flags = ("--workers=1", "--max_file_bytes=4096")

    def test_a_file_over_the_limit_is_refused_naming_the_flag(self):
        port = self.server.http_port
        # Over the file's limit, within the body's: the job's check.
        result = upload(port, {"file": ("big.txt", b"A dog runs. " * 400, "text/plain")})
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "--max_file_bytes", "4096")
        # Past the body's limit (the file's and the form's other parts'): the transport's 413,
        # before the body is read.
        result = upload(port, {"file": ("big.txt", b"A dog runs. " * 20000, "text/plain")})
        self.assertEqual(result[0], 413, result[2][:300])
        self.assertIn("--max_file_bytes", json_body(result)["message"])
        # The other routes keep --max_message_bytes.
        status, _, body = call(port, "POST", "/v1/translate", {"texts": ["A dog runs."]})
        self.assertEqual(status, 200, body[:300])


class LibreTranslateFileTest(FileApiTestCase):
    server_flags = ("--workers=1",)

    def test_translate_file_then_download(self):
        port = self.server.http_port
        result = upload(port, {"file": ("dogs.md", MARKDOWN.encode(), "text/markdown"),
                               "source": "en", "target": "de"}, path="/translate_file",
                        headers={"Host": f"translate.example:{port}"})
        self.assertEqual(result[0], 200, result[2][:400])
        answer = json_body(result)
        self.assertEqual(set(answer), {"translatedFileUrl"})
        url = urllib.parse.urlsplit(answer["translatedFileUrl"])
        self.assertEqual((url.scheme, url.netloc), ("http", f"translate.example:{port}"))
        self.assertTrue(url.path.startswith("/download_file/") and url.path.endswith("/dogs.md"),
                        url.path)
        status, headers, body = call(port, "GET", url.path)
        self.assertEqual(status, 200, body[:300])
        self.assertEqual(body.decode("utf-8"), self.native(port, MARKDOWN, "TEXT_FORMAT_MARKDOWN"))
        self.assertEqual(disposition(headers.get("Content-Disposition")),
                         ("attachment", "dogs.md"))

    def test_source_auto_as_libretranslate(self):
        port = self.server.http_port
        result = upload(port, {"file": ("film.srt", SRT.encode(), "application/x-subrip"),
                               "source": "auto", "target": "de"}, path="/translate_file")
        self.assertEqual(result[0], 200, result[2][:400])
        path = urllib.parse.urlsplit(json_body(result)["translatedFileUrl"]).path
        status, _, body = call(port, "GET", path)
        self.assertEqual(status, 200)
        self.assertEqual(body.decode("utf-8"), self.native(port, SRT, "TEXT_FORMAT_SRT"))

    def assertLibreError(self, result, status, message):
        self.assertEqual((result[0], json_body(result)), (status, {"error": message}),
                         result[2][:300])

    def test_errors_as_libretranslate_words_them(self):
        port = self.server.http_port
        self.assertLibreError(upload(port, {"source": "en", "target": "de"}, "/translate_file"),
                              400, "Invalid request: missing file parameter")
        self.assertLibreError(
            upload(port, {"file": ("a.txt", b"Hello.", "text/plain"), "source": "en"},
                   "/translate_file"), 400, "Invalid request: missing target parameter")
        result = upload(port, {"file": ("a.exe", b"MZ\x90\x00", "application/octet-stream"),
                               "source": "en", "target": "de"}, "/translate_file")
        self.assertEqual(result[0], 400, result[2][:300])
        self.assertIn("a.exe", json_body(result)["error"])
        result = call(port, "GET", "/download_file/nosuchjob/a.md")
        self.assertEqual(result[0], 404)
        self.assertEqual(set(json_body(result)), {"error"})

    def test_a_file_its_format_refuses_fails_its_job_naming_the_file_and_the_cue(self):
        # Cue 2 starts before cue 1: the file passes the checks made at submission (its name,
        # its first cue) and is refused once taken apart.
        disordered = ("1\n00:00:05,000 --> 00:00:06,000\nA dog runs.\n\n"
                      "2\n00:00:01,000 --> 00:00:02,000\nA cat sleeps.\n")
        port = self.server.http_port
        job = self.wait_done(port, self.submit(port, "film.srt", disordered)["id"])
        self.assertEqual(job["state"], "FILE_JOB_STATE_FAILED", job)
        self.assertEqual(job["error"]["code"], 3, job)  # INVALID_ARGUMENT.
        self.assertTrue(job["error"]["message"].startswith("file: cue 2 (line 6)"), job)
        self.assertIn("out of order", job["error"]["message"])
        self.assertEqual(call(port, "GET", f"/v1/jobs/{job['id']}/result")[0], 409)
        # LibreTranslate's call waits for the job: a 400 with the same words.
        result = upload(port, {"file": ("film.srt", disordered.encode(), "application/x-subrip"),
                               "source": "en", "target": "de"}, "/translate_file")
        self.assertEqual(result[0], 400, result[2][:300])
        self.assertIn("cue 2 (line 6)", json_body(result)["error"])

    def test_frontend_settings_say_files_are_translated(self):
        status, _, body = call(self.server.http_port, "GET", "/frontend/settings")
        self.assertEqual(status, 200)
        settings = json.loads(body)
        self.assertIs(settings["filesTranslation"], True)
        self.assertEqual(set(settings["supportedFilesFormat"]),
                         {".txt", ".html", ".md", ".srt", ".vtt", ".docx", ".pptx", ".odt",
                          ".odp", ".epub"})


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir")
