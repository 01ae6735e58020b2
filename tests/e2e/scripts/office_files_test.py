#!/usr/bin/env python3
"""Office documents (docs/api.md, "Office documents") through every file API, end to end, checked
with libraries nobody here wrote:

- a document of each office format is built at test time by an independent tool: DOCX by
  python-docx, ODT and ODP by odfpy, EPUB by pandoc, PPTX by LibreOffice (`soffice --headless
  --convert-to pptx` of an odfpy presentation);
- each is sent, as the bytes it is (a zip archive: NULs, bytes that are not UTF-8), through HTTP
  POST /v1/translate_file, gRPC TranslateFile, LibreTranslate's /translate_file and `mttranslate
  --format=FORMAT`: the four give identical bytes (offline equals served, and every transport is
  binary-safe);
- the result, read back by the same tool (PPTX by LibreOffice converting it to ODP, read by odfpy:
  proving it opens), has as many paragraphs as the document, each translated, German as a whole
  (language detection over HTTP), and each plain paragraph (no inline formatting) equal to the
  /v1/translate translation of its text;
- a text API given an office format (/v1/translate with TEXT_FORMAT_DOCX, LibreTranslate's
  /translate with format docx) is 400 naming the field and pointing to the file API;
- a zip bomb (an entry of 300 MiB of zeros, made here with zipfile and zlib) is refused at
  submission (400, no job), naming the file and the limit.

Usage: office_files_test.py BIN_DIR STUBS_DIR [-- UNITTEST_ARGS]
"""
import io
import json
import os
import subprocess
import sys
import time
import urllib.parse
import zipfile

from urllib3.filepost import encode_multipart_formdata

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary, call  # noqa: E402

# Plain paragraphs (no inline formatting): each must come back as /v1/translate translates it.
PLAIN = ["A man is riding a bike on the street.",
         "Two children play in the water. A woman is reading a book.",
         "A black dog runs through the snow."]
# A paragraph with a bold word (DOCX): translated, its formatting the format's business.
FORMATTED = ("A ", "young", " girl climbs into a wooden playhouse.")
TITLE = "A dog on the beach"

MEDIA_TYPES = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "odt": "application/vnd.oasis.opendocument.text",
    "odp": "application/vnd.oasis.opendocument.presentation",
    "epub": "application/epub+zip",
}
FINAL = {"FILE_JOB_STATE_DONE", "FILE_JOB_STATE_FAILED", "FILE_JOB_STATE_CANCELLED"}
DOCUMENTS = {}  # Format -> the path of its document, made in setUpModule.
WORK = None     # The module's temporary directory.


def setUpModule():
    global grpc, pb, pb_grpc, WORK
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()
    WORK = e2e_suite.module_temp_dir("office_files")
    DOCUMENTS["docx"] = make_docx(os.path.join(WORK, "report.docx"))
    DOCUMENTS["odt"] = make_odt(os.path.join(WORK, "letter.odt"))
    DOCUMENTS["odp"] = make_odp(os.path.join(WORK, "talk.odp"))
    DOCUMENTS["pptx"] = soffice_convert(DOCUMENTS["odp"], "pptx", os.path.join(WORK, "pptx"))
    DOCUMENTS["epub"] = make_epub(os.path.join(WORK, "book.epub"))


def make_docx(path):
    import docx
    document = docx.Document()
    document.add_heading(TITLE, level=1)
    for paragraph in PLAIN[:2]:
        document.add_paragraph(paragraph)
    formatted = document.add_paragraph(FORMATTED[0])
    formatted.add_run(FORMATTED[1]).bold = True
    formatted.add_run(FORMATTED[2])
    table = document.add_table(rows=1, cols=1)
    table.cell(0, 0).text = PLAIN[2]
    document.save(path)
    return path


def make_odt(path):
    from odf import text
    from odf.opendocument import OpenDocumentText
    document = OpenDocumentText()
    document.text.addElement(text.H(outlinelevel=1, text=TITLE))
    for paragraph in PLAIN:
        document.text.addElement(text.P(text=paragraph))
    document.save(path)
    return path


def make_odp(path):
    from odf import draw, style, text
    from odf.opendocument import OpenDocumentPresentation
    document = OpenDocumentPresentation()
    layout = style.PageLayout(name="Layout")
    layout.addElement(style.PageLayoutProperties(margin="0cm", pagewidth="28cm",
                                                 pageheight="21cm", printorientation="landscape"))
    document.automaticstyles.addElement(layout)
    master = style.MasterPage(name="Default", pagelayoutname=layout)
    document.masterstyles.addElement(master)
    for number, paragraphs in enumerate([[TITLE, PLAIN[0]], PLAIN[1:]], start=1):
        page = draw.Page(name=f"slide{number}", masterpagename=master)
        document.presentation.addElement(page)
        frame = draw.Frame(width="24cm", height="12cm", x="2cm", y="2cm")
        page.addElement(frame)
        box = draw.TextBox()
        frame.addElement(box)
        for paragraph in paragraphs:
            box.addElement(text.P(text=paragraph))
    document.save(path)
    return path


def make_epub(path):
    source = os.path.join(WORK, "book.md")
    with open(source, "w") as f:
        f.write(f"# {TITLE}\n\n" + "\n\n".join(PLAIN) + "\n")
    run(["pandoc", "--metadata", f"title={TITLE}", "-o", path, source])
    return path


def run(command, **options):
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300,
                            **options)
    if result.returncode != 0:
        raise AssertionError(f"{command} exited {result.returncode}: {result.stderr[-2000:]!r}")
    return result.stdout


def soffice_convert(path, extension, out_dir):
    """`path` converted by LibreOffice (headless, a profile of this suite's own) into
    `extension`, in `out_dir`: the converted file's path (the conversion failing fails)."""
    os.makedirs(out_dir, exist_ok=True)
    profile = "file://" + os.path.join(WORK, "soffice-profile")
    run(["soffice", f"-env:UserInstallation={profile}", "--headless", "--convert-to", extension,
         "--outdir", out_dir, path])
    converted = os.path.join(out_dir, os.path.splitext(os.path.basename(path))[0] + "."
                             + extension)
    if not os.path.exists(converted):
        raise AssertionError(f"soffice did not convert {path} into {extension}")
    return converted


def paragraphs(format_name, path):
    """The non-empty paragraphs of the document at `path`, in order, as its own tool reads them."""
    if format_name == "docx":
        import docx
        document = docx.Document(path)
        found = [p.text for p in document.paragraphs]
        for table in document.tables:
            for row in table.rows:
                for cell in row.cells:
                    found += [p.text for p in cell.paragraphs]
    elif format_name in ("odt", "odp", "pptx"):
        from odf import teletype
        from odf.namespaces import TEXTNS
        from odf.opendocument import load
        if format_name == "pptx":  # LibreOffice opens it, then odfpy reads it.
            path = soffice_convert(path, "odp", os.path.join(os.path.dirname(path), "as-odp"))
        document = load(path)
        # The body's headings and paragraphs in document order (not the master pages' fields).
        body = document.text if format_name == "odt" else document.presentation
        found = [teletype.extractText(e) for e in walk(body)
                 if getattr(e, "qname", None) in ((TEXTNS, "h"), (TEXTNS, "p"))]
    elif format_name == "epub":
        plain = run(["pandoc", "-f", "epub", "-t", "plain", "--wrap=none", path]).decode()
        found = plain.split("\n\n")
    else:
        raise AssertionError(format_name)
    return [" ".join(p.split()) for p in found if p.strip()]


def walk(node):
    yield node
    for child in node.childNodes:
        yield from walk(child)


def held(server):
    """The file jobs the server holds."""
    return e2e_suite.metric_total(server.metrics(), "mtserve_file_jobs_held")


def form(fields):
    body, content_type = encode_multipart_formdata(fields)
    return body, {"Content-Type": content_type}


class OfficeFilesTest(e2e_suite.MtserveTestCase):
    server_flags = ("--workers=1",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.stub = cls.translator_stub()

    def over_http(self, name, content, media_type):
        port = self.server.http_port
        body, headers = form({"file": (name, content, media_type)})
        status, _, answer = call(port, "POST", "/v1/translate_file", body, headers)
        self.assertEqual(status, 202, answer[:400])
        job_id = json.loads(answer)["id"]
        for _ in range(6000):
            status, _, answer = call(port, "GET", f"/v1/jobs/{job_id}")
            self.assertEqual(status, 200, answer[:400])
            job = json.loads(answer)
            if job["state"] in FINAL:
                break
            time.sleep(0.05)
        self.assertEqual(job["state"], "FILE_JOB_STATE_DONE", job)
        self.assertEqual(job["file_name"], name)
        self.assertEqual(job["media_type"], media_type)
        status, headers, result = call(port, "GET", job["result_url"])
        self.assertEqual(status, 200, result[:400])
        self.assertEqual(headers.get("Content-Type"), media_type)
        self.assertEqual(int(job["result_bytes"]), len(result))
        return result

    def over_grpc(self, name, content):
        def requests():
            yield pb.TranslateFileRequest(header=pb.FileHeader(file_name=name))
            for offset in range(0, len(content), 4096):
                yield pb.TranslateFileRequest(chunk=content[offset:offset + 4096])
        jobs, result = [], b""
        for response in self.stub.TranslateFile(requests(), timeout=300):
            if response.HasField("job"):
                jobs.append(response.job)
            else:
                result += response.chunk
        self.assertTrue(jobs)
        self.assertEqual(jobs[-1].state, pb.FILE_JOB_STATE_DONE, jobs[-1])
        self.assertEqual(jobs[-1].result_bytes, len(result))
        return result

    def over_libretranslate(self, name, content, media_type):
        port = self.server.http_port
        body, headers = form({"file": (name, content, media_type), "source": "en",
                              "target": "de"})
        status, _, answer = call(port, "POST", "/translate_file", body, headers)
        self.assertEqual(status, 200, answer[:400])
        url = urllib.parse.urlsplit(json.loads(answer)["translatedFileUrl"])
        self.assertTrue(url.path.endswith("/" + name), url.path)
        status, _, result = call(port, "GET", url.path)
        self.assertEqual(status, 200, result[:400])
        return result

    def offline(self, format_name, content):
        result = subprocess.run([binary("mttranslate"), "--threads=1", f"--format={format_name}"],
                                input=content, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr.decode(errors="replace"))
        return result.stdout

    def translation(self, text):
        status, _, answer = call(self.server.http_port, "POST", "/v1/translate", {"texts": [text]})
        self.assertEqual(status, 200, answer[:400])
        return json.loads(answer)["translations"][0]["hypotheses"][0]["text"]

    def language(self, text):
        status, _, answer = call(self.server.http_port, "POST", "/v1/detect",
                                 {"texts": [text], "all_languages": True})
        self.assertEqual(status, 200, answer[:400])
        return json.loads(answer)["detections"][0]["languages"][0]["language"]

    def test_every_api_gives_the_same_translated_document(self):
        for format_name in ("docx", "pptx", "odt", "odp", "epub"):
            with self.subTest(format_name):
                self.check_format(format_name)

    def check_format(self, format_name):
        path = DOCUMENTS[format_name]
        name = os.path.basename(path)
        with open(path, "rb") as f:
            content = f.read()
        # Bytes, not text: what every transport must carry untouched.
        self.assertIn(b"\0", content)
        with self.assertRaises(UnicodeDecodeError):
            content.decode("utf-8")
        media_type = MEDIA_TYPES[format_name]
        served = self.over_http(name, content, media_type)
        self.assertEqual(served[:4], b"PK\x03\x04")
        self.assertEqual(self.over_grpc(name, content), served, "gRPC differs from HTTP")
        self.assertEqual(self.over_libretranslate(name, content, media_type), served,
                         "LibreTranslate differs from HTTP")
        self.assertEqual(self.offline(format_name, content), served,
                         "mttranslate differs from the server")

        result_path = os.path.join(WORK, "translated", format_name, name)
        os.makedirs(os.path.dirname(result_path), exist_ok=True)
        with open(result_path, "wb") as f:
            f.write(served)
        source = paragraphs(format_name, path)
        translated = paragraphs(format_name, result_path)
        self.assertEqual(len(translated), len(source), f"{source} -> {translated}")
        for before, after in zip(source, translated):
            self.assertNotEqual(after, before, f"not translated: {before!r}")
            if before in PLAIN:
                self.assertEqual(after, " ".join(self.translation(before).split()),
                                 f"{before!r}: not its translation as a text")
        self.assertEqual(self.language(" ".join(translated)), "de", translated)

    def test_text_apis_refuse_office_formats_naming_the_file_api(self):
        port = self.server.http_port
        self.assertErrorAnswer(
            call(port, "POST", "/v1/translate",
                 {"texts": ["A dog runs."], "options": {"format": "TEXT_FORMAT_DOCX"}}),
            400, "INVALID_ARGUMENT", "options.format is DOCX", "/v1/translate_file")
        with self.assertRaises(grpc.RpcError) as caught:
            self.stub.Translate(pb.TranslateRequest(
                texts=[b"A dog runs."], options=pb.DecodingOptions(format=pb.TEXT_FORMAT_EPUB)),
                timeout=60)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("options.format is EPUB", caught.exception.details())
        self.assertIn("TranslateFile", caught.exception.details())
        status, _, answer = call(port, "POST", "/translate",
                                 {"q": "A dog runs.", "source": "en", "target": "de",
                                  "format": "odt"})
        self.assertEqual(status, 400, answer[:400])
        message = json.loads(answer)["error"]
        self.assertIn("format is ODT", message)
        self.assertIn("/translate_file", message)

    def test_a_zip_bomb_is_refused_at_submission_naming_the_file_and_the_limit(self):
        held_before = held(self.server)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
            with archive.open("word/document.xml", "w") as entry:
                zeros = bytes(1 << 20)
                for _ in range(300):
                    entry.write(zeros)
        bomb = buffer.getvalue()
        self.assertLess(len(bomb), 2 << 20)  # Far below --max_file_bytes: the archive's limits.
        body, headers = form({"file": ("bomb.docx", bomb, MEDIA_TYPES["docx"])})
        result = call(self.server.http_port, "POST", "/v1/translate_file", body, headers)
        # Refused at submission (not a job that fails later), before anything is inflated.
        self.assertErrorAnswer(result, 400, "INVALID_ARGUMENT", "bomb.docx", "limit")
        self.assertEqual(held(self.server), held_before)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
