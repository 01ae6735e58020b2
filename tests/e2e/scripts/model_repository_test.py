#!/usr/bin/env python3
"""Models loaded on demand within a memory budget, on a real mtserve serving the repository's
models/ through --model_dir: nothing of the directory is loaded before a request needs it (unless
--preload names it); with --model_memory room for one model, each model in turn is loaded and
the least recently used idle one unloaded, every answer equal to what a server without a budget
answers; cold loads per caller per minute are bounded; ListModels and /v1/models give each
model's state and bytes; a budget smaller than a model, and an unknown --preload, stop start-up
naming the model or flag.

Usage: model_repository_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402

# Line 3 of Multi30k's test_2016_flickr in each source language.
TEXTS = {
    "multi30k-en-de": "A girl in karate uniform breaking a stick with a front kick.",
    "multi30k-de-en": "Ein Mädchen in einem Karateanzug bricht ein Brett mit einem Tritt.",
    "multi30k-fr-en": "Une fille en tenue de karaté brisant un bâton avec un coup de pied.",
}
# Each trained model holds 31.9 MiB in float32 (docs/operations.md, "A model's memory"): room
# for one, not two.
ONE_MODEL = "40MiB"


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


class ModelRepositoryTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.models = e2e_suite.ARGS.models_dir
        # The independent expectation: each model's translation on a server with no budget.
        reference = cls.start_class_mtserve("--workers=1", f"--model_dir={cls.models}")
        cls.expected = {name: cls.translate(reference, name, text)
                        for name, text in TEXTS.items()}

    @staticmethod
    def stub(server):
        return pb_grpc.TranslatorStub(grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}"))

    @classmethod
    def translate(cls, server, model, text):
        response = cls.stub(server).Translate(
            pb.TranslateRequest(model=model, texts=[text.encode()]), timeout=120)
        return response.translations[0].hypotheses[0].text

    def states(self, server):
        """{name: (state name, resident bytes)} from ListModels."""
        models = self.stub(server).ListModels(pb.ListModelsRequest(), timeout=60).models
        return {m.name: (pb.ModelState.Name(m.state), m.resident_bytes) for m in models}

    def test_nothing_is_loaded_before_a_request_needs_it(self):
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}")
        states = self.states(server)
        self.assertEqual({name: state for name, (state, _) in states.items()},
                         {name: "MODEL_STATE_AVAILABLE" for name in TEXTS})
        models = self.stub(server).ListModels(pb.ListModelsRequest(), timeout=60).models
        estimates = {m.name: m.estimated_bytes for m in models}
        for name, estimate in estimates.items():
            # The weights are stored in 16 bits: float32 holds about twice the file's bytes.
            size = os.path.getsize(os.path.join(self.models, name, "model.safetensors"))
            self.assertTrue(1.5 * size < estimate < 2.5 * size, (name, estimate, size))
        self.assertEqual(self.translate(server, "multi30k-fr-en", TEXTS["multi30k-fr-en"]),
                         self.expected["multi30k-fr-en"])
        state, resident = self.states(server)["multi30k-fr-en"]
        self.assertEqual(state, "MODEL_STATE_LOADED")
        # What it holds once loaded is counted, within 2 % of the estimate (exact on AVX-512).
        self.assertLess(abs(resident - estimates["multi30k-fr-en"]),
                        0.02 * estimates["multi30k-fr-en"])
        self.assertEqual(self.states(server)["multi30k-en-de"][0], "MODEL_STATE_AVAILABLE")

    def test_a_budget_of_one_model_unloads_the_least_recently_used(self):
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}",
                                    f"--model_memory={ONE_MODEL}")
        order = ["multi30k-en-de", "multi30k-de-en", "multi30k-fr-en", "multi30k-en-de"]
        for name in order:
            with self.subTest(name):
                self.assertEqual(self.translate(server, name, TEXTS[name]), self.expected[name])
                states = self.states(server)
                loaded = [n for n, (state, _) in states.items() if state == "MODEL_STATE_LOADED"]
                self.assertEqual(loaded, [name], "only the model just used is loaded")
                self.assertLessEqual(sum(resident for _, resident in states.values()), 40 << 20)
        self.assertEqual(server.stderr().count("unloaded (--model_memory)"), len(order) - 1)

    def test_routing_by_language_loads_the_models_it_needs(self):
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}",
                                    f"--model_memory={ONE_MODEL}")
        status, _, body = call(server.http_port, "POST", "/v1/translate", {
            "texts": [TEXTS["multi30k-de-en"]], "target_language": "en"})
        self.assertEqual(status, 200, body)
        answer = json.loads(body)["translations"][0]
        self.assertEqual(answer["model"], "multi30k-de-en")
        self.assertEqual(answer["hypotheses"][0]["text"], self.expected["multi30k-de-en"])
        status, _, body = call(server.http_port, "GET", "/v1/models")
        self.assertEqual(status, 200, body)
        states = {m["name"]: m["state"] for m in json.loads(body)["models"]}
        self.assertEqual(states["multi30k-de-en"], "MODEL_STATE_LOADED")

    def test_cold_loads_per_minute_are_bounded(self):
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}",
                                    "--max_cold_loads_per_minute=1")
        self.assertEqual(self.translate(server, "multi30k-en-de", TEXTS["multi30k-en-de"]),
                         self.expected["multi30k-en-de"])
        with self.assertRaises(grpc.RpcError) as refused:
            self.translate(server, "multi30k-de-en", TEXTS["multi30k-de-en"])
        self.assertEqual(refused.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("--max_cold_loads_per_minute 1", refused.exception.details())
        self.assertEqual(self.states(server)["multi30k-de-en"][0], "MODEL_STATE_AVAILABLE")
        # A model already loaded costs nothing.
        self.assertEqual(self.translate(server, "multi30k-en-de", TEXTS["multi30k-en-de"]),
                         self.expected["multi30k-en-de"])

    def test_a_pivot_costs_a_cold_load_per_model_of_its_chain(self):
        # French into German goes through fr-en and en-de: two models to load.
        request = {"texts": [TEXTS["multi30k-fr-en"]], "source_language": "fr",
                   "target_language": "de"}
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}",
                                    "--max_cold_loads_per_minute=1")
        self.assertErrorAnswer(call(server.http_port, "POST", "/v1/translate", request), 429,
                               "RESOURCE_EXHAUSTED", "--max_cold_loads_per_minute 1")
        states = self.states(server)
        self.assertEqual(states["multi30k-en-de"][0], "MODEL_STATE_AVAILABLE")
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}",
                                    "--max_cold_loads_per_minute=2")
        status, _, body = call(server.http_port, "POST", "/v1/translate", request)
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["translations"][0]["model"],
                         "multi30k-fr-en+multi30k-en-de")

    def test_preload_loads_at_start(self):
        server = self.start_mtserve("--workers=1", f"--model_dir={self.models}",
                                    "--preload=multi30k-fr-en")
        states = self.states(server)
        self.assertEqual(states["multi30k-fr-en"][0], "MODEL_STATE_LOADED")
        self.assertEqual(states["multi30k-de-en"][0], "MODEL_STATE_AVAILABLE")

    def test_start_up_refusals_name_the_model_and_the_flag(self):
        mtserve = e2e_suite.binary("mtserve")
        for flags, needles in [
                (["--model_memory=1MiB"], ["multi30k-de-en", "--model_memory"]),
                (["--preload=no-such-model"], ["--preload=no-such-model"])]:
            with self.subTest(flags=flags):
                run = subprocess.run([mtserve, f"--model_dir={self.models}", "--listen=127.0.0.1:0",
                                      "--http_listen=", "--metrics_listen=", *flags],
                                     capture_output=True, text=True, timeout=120)
                self.assertNotEqual(run.returncode, 0, run.stderr[-2000:])
                for needle in needles:
                    self.assertIn(needle, run.stderr)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
