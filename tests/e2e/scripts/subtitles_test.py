#!/usr/bin/env python3
"""Subtitle files (SubRip and WebVTT) translated through every API and mttranslate, checked with
parsers nobody here wrote (Debian's python3-pysrt and python3-webvtt):

- the translated file has the source's cues: the same count, identifiers and timings (and, for
  WebVTT, cue settings); no cue is empty; lines are within the wrap limits (42 characters, 2
  lines) where the text fits;
- HTTP /v1/translate, gRPC Translate, LibreTranslate's /translate (format "srt"/"vtt") and
  mttranslate --format=srt|vtt give the same bytes (offline equals served);
- a cue that holds one whole sentence and no tags is the plain translation of its text;
- a sentence over two cues is translated once: both cues get part of it;
- a file with a timing that does not parse, or with timings out of order, is refused with 400 /
  INVALID_ARGUMENT naming the cue and the line, on every API.

Usage: subtitles_test.py BIN_DIR STUBS_DIR [-- UNITTEST_ARGS]
"""
import io
import json
import os
import re
import subprocess
import sys
import unittest

import pysrt
import webvtt

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary, call  # noqa: E402

SRT = (
    "1\n00:00:01,000 --> 00:00:03,000\nA man in a blue shirt\n\n"
    "2\n00:00:03,200 --> 00:00:05,000\nis standing on a ladder.\n\n"
    "3\n00:00:05,500 --> 00:00:07,000\nTwo young girls are playing in the park.\n\n"
    "4\n00:00:07,500 --> 00:00:09,000\nA <i>black dog</i> runs\nthrough the snow.\n\n"
    "5\n00:00:09,500 --> 00:00:11,000\n- A woman is reading a book.\n- A boy jumps into the water.\n\n"
    "6\n00:00:11,500 --> 00:00:14,000\nA group of people are standing in front of an old building "
    "while a man in a red jacket is taking a picture of them.\n"
)
# The sentence of cues 1 and 2, and the cue holding one sentence and no tags.
SPANNING = "A man in a blue shirt is standing on a ladder."
WHOLE_CUE = {"3": "Two young girls are playing in the park."}

VTT = (
    "WEBVTT - a test\r\nKind: captions\r\n\r\n"
    "STYLE\r\n::cue { color: yellow }\r\n\r\n"
    "NOTE This note is not translated.\r\n\r\n"
    "first\r\n00:00:01.000 --> 00:00:03.000 align:start line:10%\r\nA man in a blue shirt\r\n\r\n"
    "second\r\n00:00:03.200 --> 00:00:05.000\r\nis standing on a ladder.\r\n\r\n"
    "00:00:05.500 --> 00:00:07.000 position:30%\r\n<v Anna>A woman is reading a book.</v>\r\n\r\n"
    "00:00:07.500 --> 00:00:09.000\r\nTwo men are sitting on a bench.\r\n"
)
WHOLE_VTT_CUE = {3: "Two men are sitting on a bench."}  # By position (the 4th cue).

MAX_CHARS, MAX_LINES = 42, 2
FORMATS = {"srt": "TEXT_FORMAT_SRT", "vtt": "TEXT_FORMAT_VTT"}


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


def without_tags(text):
    return re.sub(r"<[^>]*>|\{\\[^}]*\}", "", text)


def srt_cues(text):
    """(id, start, end, lines without tags) of each cue, by pysrt."""
    return [(str(item.index), str(item.start), str(item.end),
             [without_tags(line) for line in item.text.split("\n")])
            for item in pysrt.from_string(text)]


def vtt_cues(text):
    """(identifier, start, end, lines without tags) of each cue, by webvtt-py."""
    return [(caption.identifier, caption.start, caption.end,
             [without_tags(line) for line in caption.lines])
            for caption in webvtt.read_buffer(io.StringIO(text)).captions]


def vtt_timing_lines(text):
    """The timing lines as written (settings included): webvtt-py does not keep settings."""
    return [line for line in text.splitlines() if "-->" in line and not line.startswith("NOTE")]


CUES = {"srt": srt_cues, "vtt": vtt_cues}
SOURCES = {"srt": SRT, "vtt": VTT}


class SubtitlesTest(e2e_suite.MtserveTestCase):
    server_flags = ("--workers=1",)

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.stub = cls.translator_stub()

    def http(self, text, format_name):
        status, _, body = call(self.server.http_port, "POST", "/v1/translate",
                               {"texts": [text], "options": {"format": format_name}})
        return status, body

    def translations(self, name):
        """The file translated by HTTP, gRPC, LibreTranslate and mttranslate."""
        source = SOURCES[name]
        status, body = self.http(source, FORMATS[name])
        self.assertEqual(status, 200, body)
        served = json.loads(body)["translations"][0]["hypotheses"][0]["text"]
        response = self.stub.Translate(
            pb.TranslateRequest(texts=[source.encode()],
                                options=pb.DecodingOptions(format=getattr(pb, FORMATS[name]))),
            timeout=120)
        status, _, libre = call(self.server.http_port, "POST", "/translate",
                                {"q": source, "source": "en", "target": "de", "format": name})
        self.assertEqual(status, 200, libre)
        offline = subprocess.run([binary("mttranslate"), "--threads=1", f"--format={name}"],
                                 input=source.encode(), capture_output=True, timeout=600)
        self.assertEqual(offline.returncode, 0, offline.stderr)
        return {"http": served, "grpc": response.translations[0].hypotheses[0].text,
                "libretranslate": json.loads(libre)["translatedText"],
                "mttranslate": offline.stdout.decode()}

    def plain(self, text):
        status, body = self.http(text, "TEXT_FORMAT_PLAIN")
        self.assertEqual(status, 200, body)
        return json.loads(body)["translations"][0]["hypotheses"][0]["text"]

    def check_file(self, name, translated):
        source_cues, cues = CUES[name](SOURCES[name]), CUES[name](translated)
        self.assertEqual(len(cues), len(source_cues))
        self.assertEqual([c[:3] for c in cues], [c[:3] for c in source_cues],
                         "identifiers and timings")
        for (cue_id, _, _, lines), (_, _, _, source_lines) in zip(cues, source_cues):
            text = " ".join(lines).strip()
            self.assertTrue(text, f"cue {cue_id} is empty")
            self.assertNotEqual(lines, source_lines, f"cue {cue_id} untranslated")
            for line in lines:
                self.assertLessEqual(len(line), MAX_CHARS, f"cue {cue_id}: {line!r}")
            dialogue = any(line.startswith("- ") for line in source_lines)
            if not dialogue and len(text) <= 70:  # Words of 15 characters or fewer always fit.
                self.assertLessEqual(len(lines), MAX_LINES, f"cue {cue_id}: {lines}")
        return cues

    def test_srt_on_every_api(self):
        files = self.translations("srt")
        self.assertEqual(len(set(files.values())), 1, files)
        cues = self.check_file("srt", files["http"])
        by_id = {cue[0]: cue[3] for cue in cues}
        for cue_id, sentence in WHOLE_CUE.items():
            self.assertEqual(" ".join(by_id[cue_id]), self.plain(sentence))
        # The dialogue cue keeps its two lines and their dashes.
        self.assertEqual(len(by_id["5"]), 2)
        self.assertTrue(all(line.startswith("- ") for line in by_id["5"]), by_id["5"])
        # The sentence over cues 1 and 2: its translation's words, divided in order.
        spanning = self.plain(SPANNING)
        self.assertEqual(" ".join(by_id["1"] + by_id["2"]).split(), spanning.split())
        # The tag is kept.
        self.assertEqual(files["http"].count("<i>"), 1)
        self.assertEqual(files["http"].count("</i>"), 1)

    def test_vtt_on_every_api(self):
        files = self.translations("vtt")
        self.assertEqual(len(set(files.values())), 1, files)
        translated = files["http"]
        cues = self.check_file("vtt", translated)
        self.assertEqual(vtt_timing_lines(translated), vtt_timing_lines(VTT), "cue settings")
        for kept in ("WEBVTT - a test\r\nKind: captions\r\n\r\n",
                     "STYLE\r\n::cue { color: yellow }\r\n\r\n",
                     "NOTE This note is not translated.\r\n\r\n", "<v Anna>"):
            self.assertIn(kept, translated)
        self.assertNotIn("\n", translated.replace("\r\n", ""), "CRLF line ends kept")
        for index, sentence in WHOLE_VTT_CUE.items():
            self.assertEqual(" ".join(cues[index][3]), self.plain(sentence))

    def test_bad_files_are_refused_naming_cue_and_line(self):
        cases = [
            ("srt", "1\n00:00:01,000 --> 00:00:02,000\nA dog.\n\n"
                    "2\n00:00:03,000 --> 00:00:0x,000\nA cat.\n", ["cue 2 (line 6)", "timing"]),
            ("srt", "1\n00:00:05,000 --> 00:00:06,000\nA dog.\n\n"
                    "2\n00:00:01,000 --> 00:00:02,000\nA cat.\n", ["cue 2 (line 6)", "out of order"]),
            ("vtt", "1\n00:00:01.000 --> 00:00:02.000\nA dog.\n", ["WEBVTT"]),
        ]
        for name, text, needles in cases:
            with self.subTest(name=name, text=text[:40]):
                status, body = self.http(text, FORMATS[name])
                self.assertEqual(status, 400, body)
                for needle in needles + ["texts[0]"]:
                    self.assertIn(needle, body.decode())
                with self.assertRaises(grpc.RpcError) as raised:
                    self.stub.Translate(pb.TranslateRequest(
                        texts=[text.encode()],
                        options=pb.DecodingOptions(format=getattr(pb, FORMATS[name]))),
                        timeout=60)
                self.assertEqual(raised.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
                for needle in needles:
                    self.assertIn(needle, raised.exception.details())
                status, _, body = call(self.server.http_port, "POST", "/translate",
                                       {"q": text, "source": "en", "target": "de",
                                        "format": name})
                self.assertEqual(status, 400, body)
                offline = subprocess.run([binary("mttranslate"), f"--format={name}"],
                                         input=text.encode(), capture_output=True, timeout=600)
                self.assertNotEqual(offline.returncode, 0)
                self.assertIn(needles[0], offline.stderr.decode())


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
