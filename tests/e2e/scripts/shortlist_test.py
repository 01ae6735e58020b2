#!/usr/bin/env python3
"""A lexical shortlist on a real mtserve: a model directory with a vmap.txt (the embedded model's
files beside tests/data/shortlists/multi30k-en-de/vmap.txt) is served with it. Over HTTP and
gRPC each answer equals mttranslate's on the same directory (offline equals served, with and
without the list); `shortlist: false` gives what the same model without a list gives; the two are
cached apart (asked one after the other, the second is not the first's cached answer, and each
asked again answers the same); a non-boolean `shortlist` is a 400 naming the field.

Usage: shortlist_test.py BIN_DIR STUBS_DIR MODELS_DIR DATA_DIR [-- unittest arguments]
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402
from model_with_list import model_with_list  # noqa: E402  (scripts/lib, via e2e_suite)

# Lines of test_2016_flickr.en: the list changes the beam-4 German of lines 3 and 4, not of the
# others.
LINES = [
    "Two young, White males are outside near many bushes.",
    "A girl in karate uniform breaking a stick with a front kick.",
    "Five people wearing winter jackets and helmets stand in the snow, with snowmobiles in the "
    "background.",
    "People are fixing the roof of a house.",
]

class ShortlistTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        args = e2e_suite.ARGS
        cls.plain_dir = os.path.join(args.models_dir, "multi30k-en-de")
        cls.list_dir = os.path.join(e2e_suite.module_temp_dir("shortlist"), "en-de-list")
        model_with_list(cls.plain_dir,
                        os.path.join(args.data_dir, "shortlists", "multi30k-en-de", "vmap.txt"),
                        cls.list_dir)
        cls.server_flags = ("--workers=1", f"--model=en-de={cls.list_dir}")
        super().setUpClass()

    def translate(self, options=None, server=None):
        body = {"texts": LINES,
                "options": dict(beam_size=4, split_sentences=False, **(options or {}))}
        status, _, answer = call((server or self.server).http_port, "POST", "/v1/translate", body)
        self.assertEqual(status, 200, answer)
        return [t["hypotheses"][0]["text"] for t in json.loads(answer)["translations"]]

    def offline(self, model_dir, *flags):
        out = subprocess.run(
            [e2e_suite.binary("mttranslate"), f"--model={model_dir}", "--beam_size=4",
             "--split_sentences=false", *flags],
            input="\n".join(LINES) + "\n", capture_output=True, text=True, check=True,
            timeout=120)
        return out.stdout.splitlines()

    def test_served_equals_offline_with_and_without_the_list(self):
        listed = self.translate()
        self.assertEqual(listed, self.offline(self.list_dir))
        whole = self.translate({"shortlist": False})
        self.assertEqual(whole, self.offline(self.list_dir, "--shortlist=false"))
        # The list changes some translation of these lines (else this test shows nothing).
        self.assertNotEqual(listed, whole)

    def test_off_is_the_model_without_a_list(self):
        plain = self.start_mtserve("--workers=1", f"--model=en-de={self.plain_dir}")
        self.assertEqual(self.translate({"shortlist": False}),
                         self.translate(server=plain))
        self.assertEqual(self.translate({"shortlist": False}), self.offline(self.plain_dir))

    def test_on_and_off_are_cached_apart(self):
        first_on, first_off = self.translate(), self.translate({"shortlist": False})
        # Had the cache one key for both, the second would be the first's answer.
        self.assertNotEqual(first_on, first_off)
        self.assertEqual(self.translate(), first_on)
        self.assertEqual(self.translate({"shortlist": False}), first_off)

    def test_grpc_option(self):
        _, translation_pb2, translation_pb2_grpc = e2e_suite.grpc_stubs()
        stub = self.translator_stub()
        request = translation_pb2.TranslateRequest(texts=[line.encode() for line in LINES])
        request.options.beam_size = 4
        request.options.split_sentences = False
        request.options.shortlist = False
        answer = stub.Translate(request, timeout=60)
        self.assertEqual([t.hypotheses[0].text for t in answer.translations],
                         self.translate({"shortlist": False}))
        request.ClearField("options")
        request.options.beam_size = 4
        request.options.split_sentences = False
        answer = stub.Translate(request, timeout=60)
        self.assertEqual([t.hypotheses[0].text for t in answer.translations], self.translate())

    def test_a_non_boolean_is_refused(self):
        # Strings too, which protobuf's JSON parser reads as booleans ("true", "false").
        for value in (3, "no", "false"):
            with self.subTest(value=value):
                status, _, answer = call(self.server.http_port, "POST", "/v1/translate",
                                         {"texts": ["A dog."], "options": {"shortlist": value}})
                self.assertEqual(status, 400, answer)
                self.assertIn(b"options.shortlist must be a boolean", answer)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir", "data_dir")
