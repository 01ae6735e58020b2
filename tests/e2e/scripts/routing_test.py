#!/usr/bin/env python3
"""Routing by language on a real mtserve serving the three trained models (en-de, de-en, fr-en)
of the repository's models/ through --model_dir, which names each after its folder:
through gRPC (unary and stream), HTTP's /v1/translate (and :stream) and LibreTranslate's
/translate, a batch of German and French texts with source "auto" is translated text by text by
each one's own model, exactly as requests naming that model translate it, with the detected
language per text; a Czech text (no model reads Czech) gets its own error naming cs and the pairs
served while the other texts are answered; a target no model serves, or a model and a target
together, are refused naming the field.

Usage: routing_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402

# Line 2 of Multi30k's test_2016_flickr in each language.
GERMAN = "Ein Boston Terrier läuft über saftig-grünes Gras vor einem weißen Zaun."
FRENCH = "Un terrier de Boston court sur l'herbe verdoyante devant une clôture blanche."
CZECH = "Bostonský teriér běží po zářivě zelené trávě před bílým plotem."
PAIRS = "de->en (multi30k-de-en), en->de (multi30k-en-de), fr->en (multi30k-fr-en)"


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


class RoutingTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        models = e2e_suite.ARGS.models_dir
        # The repository's models/ as a model directory: each checkpoint named after its folder.
        cls.server_flags = ("--workers=1", "--max_texts_per_request=8", f"--model_dir={models}")
        super().setUpClass()
        cls.stub = cls.translator_stub()
        # The independent expectation: each text translated by the model named.
        cls.expected = {}
        for model, text in (("multi30k-de-en", GERMAN), ("multi30k-fr-en", FRENCH)):
            response = cls.stub.Translate(
                pb.TranslateRequest(model=model, texts=[text.encode()]), timeout=60)
            cls.expected[text] = response.translations[0].hypotheses[0].text

    def assertRoutedText(self, translation, text, model, language):
        """`translation` (a message or its JSON) of `text` came from `model`, detected as
        `language`."""
        get = (lambda field: translation[field]) if isinstance(translation, dict) else (
            lambda field: getattr(translation, field))
        self.assertEqual(get("model"), model)
        detected = get("detected_language")
        detected = detected if isinstance(detected, dict) else {
            "language": detected.language, "confidence": detected.confidence}
        self.assertEqual(detected["language"], language)
        self.assertGreater(detected["confidence"], 90)
        self.assertLessEqual(detected["confidence"], 100)
        self.assertEqual(get("hypotheses")[0]["text"] if isinstance(translation, dict)
                         else translation.hypotheses[0].text, self.expected[text])

    def assertCzechRefused(self, code, message):
        self.assertEqual(code, 3)  # INVALID_ARGUMENT
        self.assertIn("detected as cs", message)
        self.assertIn("no model here translates cs into en", message)
        self.assertIn(PAIRS, message)

    def test_the_model_directory_is_served_in_name_order(self):
        models = self.stub.ListModels(pb.ListModelsRequest(), timeout=60).models
        self.assertEqual([(m.name, m.source_language, m.target_language, m.is_default)
                          for m in models],
                         [("multi30k-de-en", "de", "en", True),
                          ("multi30k-en-de", "en", "de", False),
                          ("multi30k-fr-en", "fr", "en", False)])

    def test_grpc_routes_each_text_to_its_own_model(self):
        response = self.stub.Translate(pb.TranslateRequest(
            texts=[t.encode() for t in (GERMAN, FRENCH, CZECH)], source_language="auto",
            target_language="en"), timeout=60)
        self.assertEqual(response.model, "", "two models translated")
        german, french, czech = response.translations
        self.assertRoutedText(german, GERMAN, "multi30k-de-en", "de")
        self.assertRoutedText(french, FRENCH, "multi30k-fr-en", "fr")
        self.assertFalse(german.HasField("error"))
        self.assertCzechRefused(czech.error.code, czech.error.message)
        self.assertEqual(czech.detected_language.language, "cs")
        self.assertEqual(len(czech.hypotheses), 0)
        self.assertEqual(czech.model, "")

    def test_grpc_stream_routes_each_text(self):
        requests = [pb.TranslateStreamRequest(id=name, text=text.encode(), target_language="en")
                    for name, text in (("de", GERMAN), ("fr", FRENCH), ("cs", CZECH))]
        answers = {a.id: a for a in self.stub.TranslateStream(iter(requests), timeout=60)}
        self.assertRoutedText(answers["de"].translation, GERMAN, "multi30k-de-en", "de")
        self.assertEqual(answers["de"].model, "multi30k-de-en")
        self.assertRoutedText(answers["fr"].translation, FRENCH, "multi30k-fr-en", "fr")
        self.assertCzechRefused(answers["cs"].error.code, answers["cs"].error.message)

    def test_http_routes_each_text_to_its_own_model(self):
        status, _, body = call(self.server.http_port, "POST", "/v1/translate", json.dumps(
            {"texts": [GERMAN, FRENCH, CZECH], "source_language": "auto",
             "target_language": "en"}))
        self.assertEqual(status, 200, body)
        german, french, czech = json.loads(body)["translations"]
        self.assertRoutedText(german, GERMAN, "multi30k-de-en", "de")
        self.assertRoutedText(french, FRENCH, "multi30k-fr-en", "fr")
        self.assertCzechRefused(czech["error"]["code"], czech["error"]["message"])
        self.assertIn("texts[2]", czech["error"]["message"])

    def test_http_stream_routes_each_text(self):
        lines = "".join(json.dumps({"id": name, "text": text, "target_language": "en"}) + "\n"
                        for name, text in (("de", GERMAN), ("fr", FRENCH), ("cs", CZECH)))
        status, _, body = call(self.server.http_port, "POST", "/v1/translate:stream", lines,
                               {"Content-Type": "application/x-ndjson"})
        self.assertEqual(status, 200, body)
        answers = {a["id"]: a for a in map(json.loads, body.decode().splitlines())}
        self.assertRoutedText(answers["de"]["translation"], GERMAN, "multi30k-de-en", "de")
        self.assertRoutedText(answers["fr"]["translation"], FRENCH, "multi30k-fr-en", "fr")
        self.assertCzechRefused(answers["cs"]["error"]["code"], answers["cs"]["error"]["message"])
        self.assertIn("text: detected as cs", answers["cs"]["error"]["message"])

    def test_a_given_source_routes_without_detecting(self):
        response = self.stub.Translate(pb.TranslateRequest(
            texts=[FRENCH.encode()], source_language="fr", target_language="en"), timeout=60)
        self.assertEqual(response.model, "multi30k-fr-en")
        self.assertEqual(response.translations[0].hypotheses[0].text, self.expected[FRENCH])
        self.assertFalse(response.translations[0].HasField("detected_language"))

    def test_libretranslate_auto_routes_each_text_of_an_array(self):
        status, _, body = call(self.server.http_port, "POST", "/translate", json.dumps(
            {"q": [GERMAN, FRENCH], "source": "auto", "target": "en"}),
            {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)
        answer = json.loads(body)
        self.assertEqual(answer["translatedText"], [self.expected[GERMAN], self.expected[FRENCH]])
        self.assertEqual([d["language"] for d in answer["detectedLanguage"]], ["de", "fr"])
        self.assertTrue(all(90 < d["confidence"] <= 100 for d in answer["detectedLanguage"]))
        self.assertNotIn("errors", answer)

    def test_libretranslate_an_unserved_text_in_an_array_comes_back_with_its_error(self):
        status, _, body = call(self.server.http_port, "POST", "/translate", json.dumps(
            {"q": [CZECH, FRENCH], "source": "auto", "target": "en"}),
            {"Content-Type": "application/json"})
        self.assertEqual(status, 200, body)
        answer = json.loads(body)
        self.assertEqual(answer["translatedText"], [CZECH, self.expected[FRENCH]],
                         "the untranslated text comes back as sent, nothing lost")
        self.assertEqual([d["language"] for d in answer["detectedLanguage"]], ["cs", "fr"])
        self.assertIsNone(answer["errors"][1])
        self.assertCzechRefused(3, answer["errors"][0])
        self.assertIn("q[0]", answer["errors"][0])

    def test_libretranslate_a_single_unserved_text_is_the_error(self):
        status, _, body = call(self.server.http_port, "POST", "/translate", json.dumps(
            {"q": CZECH, "source": "auto", "target": "en"}), {"Content-Type": "application/json"})
        self.assertEqual(status, 400, body)
        self.assertCzechRefused(3, json.loads(body)["error"])

    def test_request_errors_name_the_field(self):
        cases = [
            ({"target_language": "es"}, "target_language: no model here translates into es"),
            ({"source_language": "cs", "target_language": "de"},
             "source_language: no model here translates cs into de"),
            ({"model": "multi30k-de-en", "target_language": "en"},
             "model and target_language: give one or the other"),
        ]
        for fields, needle in cases:
            with self.subTest(fields=fields):
                self.assertErrorAnswer(
                    call(self.server.http_port, "POST", "/v1/translate",
                         {"texts": [GERMAN], **fields}), 400, "INVALID_ARGUMENT", needle)
        status, _, body = call(self.server.http_port, "POST", "/translate", json.dumps(
            {"q": GERMAN, "source": "auto", "target": "es"}), {"Content-Type": "application/json"})
        self.assertEqual(status, 400, body)
        self.assertIn("target: no model here translates into es", json.loads(body)["error"])


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
