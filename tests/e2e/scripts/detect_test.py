#!/usr/bin/env python3
"""Language detection on a real mtserve serving the three trained models (en-de, de-en, fr-en):
gRPC Detect and HTTP's POST /v1/detect rank each text of a batch on its own among the served
source languages, or among every language on request, and refuse what the limits refuse, naming
the field; LibreTranslate's POST /detect answers in LibreTranslate's shape, JSON or form.

Usage: detect_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import json
import os
import subprocess
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


class DetectTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        models = e2e_suite.ARGS.models_dir
        cls.server_flags = (
            "--workers=1", "--max_texts_per_request=8",
            f"--model=en-de={models}/multi30k-en-de", f"--model=de-en={models}/multi30k-de-en",
            f"--model=fr-en={models}/multi30k-fr-en")
        super().setUpClass()
        cls.stub = cls.translator_stub()

    def detect(self, texts, **fields):
        return self.stub.Detect(pb.DetectRequest(texts=[t.encode() for t in texts], **fields),
                                timeout=60)

    def test_each_text_of_a_batch_on_its_own(self):
        response = self.detect(["Zwei Männer spielen Fußball im Park.",
                                "Une femme lit un livre sur un banc.",
                                "A dog runs through the snow.", "https://example.com 42"])
        best = [d.languages[0].language if d.languages else None for d in response.detections]
        self.assertEqual(best, ["de", "fr", "en", None])
        for detection in response.detections[:3]:
            self.assertEqual(len(detection.languages), 3, "the three served source languages")
            self.assertGreater(detection.languages[0].confidence, 90)
            confidences = [language.confidence for language in detection.languages]
            self.assertEqual(confidences, sorted(confidences, reverse=True))

    def test_target_restricts_to_the_languages_read_into_it(self):
        response = self.detect(["A dog runs through the snow."], target="en")
        languages = [language.language for language in response.detections[0].languages]
        self.assertEqual(sorted(languages), ["de", "fr"])
        self.assertLess(response.detections[0].languages[0].confidence, 50,
                        "English is not read into English: neither German nor French is likely")

    def test_all_languages_names_a_language_no_model_reads(self):
        czech = "Muž jede na kole po horské silnici."
        served = self.detect([czech]).detections[0].languages
        self.assertTrue(all(language.confidence < 20 for language in served), served)
        everything = self.detect([czech], all_languages=True, max_results=1).detections[0]
        self.assertEqual([language.language for language in everything.languages], ["cs"])

    def test_limits_name_the_field(self):
        with self.assertRaises(grpc.RpcError) as many:
            self.detect(["a"] * 9)
        self.assertEqual(many.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("texts has 9 entries; the limit is 8", many.exception.details())
        with self.assertRaises(grpc.RpcError) as bad:
            self.stub.Detect(pb.DetectRequest(texts=[b"ok", b"caf\xc3"]), timeout=60)
        self.assertEqual(bad.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("texts[1]", bad.exception.details())
        with self.assertRaises(grpc.RpcError) as target:
            self.detect(["Un chat."], target="cs")
        self.assertEqual(target.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("no model here translates into cs", target.exception.details())

    def test_a_message_that_does_not_parse_is_refused_saying_so(self):
        channel = grpc.insecure_channel(f"127.0.0.1:{self.server.grpc_port}")
        self.addCleanup(channel.close)
        raw = channel.unary_unary("/mtserve.v1.Translator/Detect")
        with self.assertRaises(grpc.RpcError) as broken:
            raw(b"\x0a\xff\xff\xff\xff\x0f", timeout=60)  # texts: a length past the end.
        self.assertEqual(broken.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("mtserve.v1.DetectRequest", broken.exception.details())

    def test_mtclient_detects_a_line_at_a_time(self):
        lines = ["Ein Hund rennt durch den Schnee.", "42", "Un chien court dans la neige."]
        run = subprocess.run(
            [e2e_suite.binary("mtclient"), "detect", f"--server=127.0.0.1:{self.server.grpc_port}",
             "--batch_size=2"], input="\n".join(lines) + "\n", capture_output=True, text=True,
            timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        out = run.stdout.splitlines()
        self.assertEqual([line.split()[0] for line in out], ["de", "-", "fr"], run.stdout)
        self.assertGreater(float(out[0].split()[1]), 90, run.stdout)
        run = subprocess.run(
            [e2e_suite.binary("mtclient"), "detect", f"--server=127.0.0.1:{self.server.grpc_port}",
             "--all_languages", "--max_results=2"], input="Muž jede na kole.\n",
            capture_output=True, text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.split()[0], "cs", run.stdout)
        self.assertEqual(len(run.stdout.split()), 4, "two languages, each with its confidence")

    def test_http_answers_as_grpc(self):
        texts = ["Zwei Männer spielen Fußball im Park.", "Une femme lit un livre.", "!!!"]
        status, headers, body = call(self.server.http_port, "POST", "/v1/detect",
                                     {"texts": texts, "max_results": 2})
        self.assertEqual(status, 200, body)
        self.assertEqual(headers.get("Content-Type"), "application/json")
        answer = json.loads(body)
        grpc_answer = self.detect(texts, max_results=2)
        self.assertEqual(len(answer["detections"]), 3)
        for got, want in zip(answer["detections"], grpc_answer.detections):
            self.assertEqual([x["language"] for x in got["languages"]],
                             [x.language for x in want.languages])
            for x, y in zip(got["languages"], want.languages):
                self.assertAlmostEqual(x["confidence"], y.confidence, places=3)
        self.assertEqual(answer["detections"][2]["languages"], [])
        self.assertErrorAnswer(call(self.server.http_port, "POST", "/v1/detect",
                                    {"texts": ["a"] * 9}),
                               400, "INVALID_ARGUMENT", "texts has 9 entries; the limit is 8")

    def test_libretranslate_detect_json_and_form(self):
        status, _, body = call(self.server.http_port, "POST", "/detect",
                               {"q": "Un homme fait du vélo dans la rue."},
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)
        answer = json.loads(body)
        self.assertEqual(answer[0]["language"], "fr", answer)
        self.assertGreater(answer[0]["confidence"], 90)
        self.assertEqual(sorted(x["language"] for x in answer), ["de", "en", "fr"],
                         "LibreTranslate ranks the languages it serves")
        self.assertEqual([set(x) for x in answer], [{"confidence", "language"}] * 3)
        form = urllib.parse.urlencode({"q": "Ein Mann fährt Fahrrad."})
        status, _, body = call(self.server.http_port, "POST", "/detect", form,
                               {"Content-Type": "application/x-www-form-urlencoded"})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)[0]["language"], "de", body)
        # No letters: undetermined, never a confident guess.
        status, _, body = call(self.server.http_port, "POST", "/detect", {"q": "12345"},
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body), [{"confidence": 0.0, "language": "und"}])
        status, _, body = call(self.server.http_port, "POST", "/detect", {"text": "x"},
                               {"Content-Type": "application/json"})
        self.assertEqual(status, 400, body)
        self.assertEqual(json.loads(body), {"error": "Invalid request: missing q parameter"})


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
