#!/usr/bin/env python3
"""The operators' calls on a real mtserve serving the repository's models/ through --model_dir
with room for one model (--model_memory), with a keys file of an admin key (admin=true) and a
plain one: an admin loads and unloads models over HTTP (POST /v1/models/{name}:load, :unload)
and gRPC (LoadModel, UnloadModel), each seen in /v1/models, in mtserve_model_loads_total and
mtserve_model_unloads_total, in the request metrics and in the log under the key's name; a load
unloads the idle model as a request's would; a model unloaded by an operator serves the next
request again; a key without the attribute gets 403 (PERMISSION_DENIED) and changes nothing;
without a keys file the calls do not exist (501, UNIMPLEMENTED).

Usage: model_admin_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import hashlib
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call, metric_total, requests_total  # noqa: E402

ADMIN_KEY, USER_KEY = f"ops-{os.urandom(16).hex()}", f"user-{os.urandom(16).hex()}"
# Each trained model holds 31.9 MiB in float32 (docs/operations.md, "A model's memory"): room
# for one, not two.
ONE_MODEL = "40MiB"
FR_EN, DE_EN = "multi30k-fr-en", "multi30k-de-en"


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


def bearer(key):
    return {"Authorization": f"Bearer {key}"}


class ModelAdminTest(e2e_suite.MtserveTestCase):
    def start(self, keys=True):
        flags = ["--workers=1", f"--model_dir={e2e_suite.ARGS.models_dir}",
                 f"--model_memory={ONE_MODEL}"]
        if keys:
            path = os.path.join(self.temp_dir(), "keys")
            with open(path, "w") as f:
                f.write(f"ops sha256:{hashlib.sha256(ADMIN_KEY.encode()).hexdigest()} "
                        "admin=true\n")
                f.write(f"user sha256:{hashlib.sha256(USER_KEY.encode()).hexdigest()}\n")
            flags.append(f"--api_keys_file={path}")
        server = self.start_mtserve(*flags)
        channel = grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}")
        self.addCleanup(channel.close)
        return server, pb_grpc.TranslatorStub(channel)

    def http(self, server, call_name, model, key=ADMIN_KEY):
        status, _, body = call(server.http_port, "POST", f"/v1/models/{model}:{call_name}",
                               headers=bearer(key))
        return status, json.loads(body)

    def states(self, server):
        """{name: state} from /v1/models."""
        status, _, body = call(server.http_port, "GET", "/v1/models", headers=bearer(ADMIN_KEY))
        self.assertEqual(status, 200, body)
        return {m["name"]: m["state"] for m in json.loads(body)["models"]}

    @staticmethod
    def counts(server, model):
        """(loads that succeeded, unloads) of `model` in the metrics."""
        text = server.metrics()
        return (metric_total(text, "mtserve_model_loads_total", model=model, result="ok"),
                metric_total(text, "mtserve_model_unloads_total", model=model))

    def test_an_admin_loads_and_unloads_over_http(self):
        server, _ = self.start()
        self.assertEqual(set(self.states(server).values()), {"MODEL_STATE_AVAILABLE"})
        status, loaded = self.http(server, "load", FR_EN)
        self.assertEqual(status, 200, loaded)
        self.assertEqual((loaded["name"], loaded["state"]), (FR_EN, "MODEL_STATE_LOADED"))
        self.assertEqual(self.states(server)[FR_EN], "MODEL_STATE_LOADED")
        self.assertEqual(self.counts(server, FR_EN), (1, 0))

        status, unloaded = self.http(server, "unload", FR_EN)
        self.assertEqual(status, 200, unloaded)
        self.assertEqual(
            (unloaded["state"], unloaded["resident_bytes"], unloaded["unload_pending"]),
            ("MODEL_STATE_AVAILABLE", "0", False))
        self.assertEqual(self.states(server)[FR_EN], "MODEL_STATE_AVAILABLE")
        self.assertEqual(self.counts(server, FR_EN), (1, 1))
        # Counted as other calls are, and logged under the key's name (never the key).
        text = server.metrics()
        self.assertEqual(requests_total(text, method="LoadModel", frontend="http", code="OK",
                                        model=FR_EN), 1)
        self.assertEqual(requests_total(text, method="UnloadModel", frontend="http", code="OK",
                                        model=FR_EN), 1)
        log = server.stderr()
        self.assertIn(f'LoadModel of model "{FR_EN}" by API key ops: OK', log)
        self.assertIn(f'UnloadModel of model "{FR_EN}" by API key ops: OK', log)
        self.assertNotIn(ADMIN_KEY, log)

    def test_an_admin_loads_and_unloads_over_grpc(self):
        server, stub = self.start()
        metadata = [("authorization", f"Bearer {ADMIN_KEY}")]
        loaded = stub.LoadModel(pb.LoadModelRequest(name=DE_EN), timeout=120, metadata=metadata)
        self.assertEqual((loaded.name, pb.ModelState.Name(loaded.state)),
                         (DE_EN, "MODEL_STATE_LOADED"))
        self.assertGreater(loaded.resident_bytes, 0)
        self.assertEqual(self.states(server)[DE_EN], "MODEL_STATE_LOADED")
        self.assertEqual(self.counts(server, DE_EN), (1, 0))
        unloaded = stub.UnloadModel(pb.UnloadModelRequest(name=DE_EN), timeout=60,
                                    metadata=metadata)
        self.assertEqual(pb.ModelState.Name(unloaded.state), "MODEL_STATE_AVAILABLE")
        self.assertEqual(self.states(server)[DE_EN], "MODEL_STATE_AVAILABLE")
        self.assertEqual(self.counts(server, DE_EN), (1, 1))
        self.assertEqual(requests_total(server.metrics(), method="LoadModel", frontend="grpc",
                                        code="OK"), 1)

    def test_a_load_unloads_the_idle_model_and_an_unloaded_model_serves_again(self):
        server, _ = self.start()
        self.assertEqual(self.http(server, "load", FR_EN)[0], 200)
        # Room for one: the idle fr-en goes, as for a request's load.
        self.assertEqual(self.http(server, "load", DE_EN)[0], 200)
        states = self.states(server)
        self.assertEqual((states[FR_EN], states[DE_EN]),
                         ("MODEL_STATE_AVAILABLE", "MODEL_STATE_LOADED"))
        self.assertEqual(self.counts(server, FR_EN), (1, 1))
        # Unloaded by the operator, not disabled: a request loads it again.
        self.assertEqual(self.http(server, "unload", DE_EN)[0], 200)
        status, _, body = call(server.http_port, "POST", "/v1/translate",
                               {"model": DE_EN, "texts": ["Ein Hund rennt."]},
                               headers=bearer(USER_KEY))
        self.assertEqual(status, 200, body)
        self.assertEqual(self.states(server)[DE_EN], "MODEL_STATE_LOADED")
        self.assertEqual(self.counts(server, DE_EN), (2, 1))

    def test_a_key_without_the_admin_attribute_is_forbidden(self):
        server, stub = self.start()
        for call_name in ("load", "unload"):
            status, error = self.http(server, call_name, FR_EN, key=USER_KEY)
            self.assertEqual((status, error["code"]), (403, "PERMISSION_DENIED"), error)
            self.assertIn('the API key "user" lacks the admin attribute', error["message"])
            self.assertNotIn(USER_KEY, error["message"])
        with self.assertRaises(grpc.RpcError) as refused:
            stub.LoadModel(pb.LoadModelRequest(name=FR_EN), timeout=60,
                           metadata=[("x-api-key", USER_KEY)])
        self.assertEqual(refused.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        status, error = self.http(server, "load", FR_EN, key="not-a-key")
        self.assertEqual((status, error["code"]), (401, "UNAUTHENTICATED"), error)
        self.assertEqual(self.states(server)[FR_EN], "MODEL_STATE_AVAILABLE")
        self.assertEqual(self.counts(server, FR_EN), (0, 0))
        self.assertEqual(requests_total(server.metrics(), code="PERMISSION_DENIED"), 3)

    def test_without_api_keys_the_calls_do_not_exist(self):
        server, stub = self.start(keys=False)
        status, error = self.http(server, "load", FR_EN)
        self.assertEqual((status, error["code"]), (501, "UNIMPLEMENTED"), error)
        self.assertIn("only on a server with API keys (--api_keys_file)", error["message"])
        with self.assertRaises(grpc.RpcError) as refused:
            stub.UnloadModel(pb.UnloadModelRequest(name=FR_EN), timeout=60)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        self.assertEqual(self.states(server)[FR_EN], "MODEL_STATE_AVAILABLE")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
