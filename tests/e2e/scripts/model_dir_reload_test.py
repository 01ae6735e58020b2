#!/usr/bin/env python3
"""--model_dir re-read while serving, on a real mtserve: a checkpoint folder copied in is served
after SIGHUP (and, separately, after the directory's polling sees it twice the same); one removed
is no longer (NOT_FOUND); one replaced by other files answers with the new model's translation,
never the old one's from the sentence cache. /metrics follows: mtserve_model_info has the model's
series while it is served (the new model's languages once replaced) and none once it is removed;
mtserve_model_rescans_total counts each SIGHUP's re-read by its result (changed, unchanged,
failed: a bad mtserve.json, logged once). A directory that cannot be read (here moved away; given
with a trailing slash) keeps its models. The expected translations are each model's on a reference
server serving the repository's models/. Waits for events (ListModels, a log line or a counter
changing), never for a time.

Usage: model_dir_reload_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402

TEXT = "A girl in karate uniform breaking a stick with a front kick."
# Guards against a hang only: each wait ends on an event long before.
GUARD_SECONDS = 120


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


class ModelDirReloadTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.models = e2e_suite.ARGS.models_dir
        reference = cls.start_class_mtserve("--workers=1", f"--model_dir={cls.models}")
        cls.expected = {name: cls.translate(reference, name, TEXT)
                        for name in ("multi30k-en-de", "multi30k-de-en")}

    @staticmethod
    def stub(server):
        return pb_grpc.TranslatorStub(grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}"))

    @classmethod
    def translate(cls, server, model, text):
        response = cls.stub(server).Translate(
            pb.TranslateRequest(model=model, texts=[text.encode()]), timeout=120)
        return response.translations[0].hypotheses[0].text

    def names(self, server):
        return [m.name for m in self.stub(server).ListModels(pb.ListModelsRequest(),
                                                              timeout=60).models]

    def wait_names(self, server, predicate):
        deadline = time.monotonic() + GUARD_SECONDS
        while not predicate(self.names(server)):
            self.assertLess(time.monotonic(), deadline, self.names(server))
            time.sleep(0.1)

    def wait_metric(self, server, metric, value, **labels):
        """Waits until `metric`'s series with these labels add up to `value`."""
        deadline = time.monotonic() + GUARD_SECONDS
        while e2e_suite.metric_total(server.metrics(), metric, **labels) != value:
            self.assertLess(time.monotonic(), deadline,
                            f"{metric}{labels} != {value}:\n{server.metrics()}")
            time.sleep(0.1)

    def rescans(self, server):
        """mtserve_model_rescans_total by result."""
        text = server.metrics()
        return {result: e2e_suite.metric_total(text, "mtserve_model_rescans_total", result=result)
                for result in ("changed", "unchanged", "failed")}

    def info(self, server, model):
        """The (source, target) languages of `model`'s mtserve_model_info series."""
        return sorted((labels["source_language"], labels["target_language"])
                      for labels, _ in e2e_suite.metric_series(
                          server.metrics(), "mtserve_model_info", model=model))

    def directory(self):
        """A --model_dir holding the French model as "base" (a server needs one model)."""
        root = tempfile.mkdtemp(prefix="mtserve-model-dir-")
        self.addCleanup(shutil.rmtree, root, ignore_errors=True)
        shutil.copytree(os.path.join(self.models, "multi30k-fr-en"), os.path.join(root, "base"))
        return root

    def copy_in(self, root, model, name):
        """Copies models/`model` in as `name` the safe way: as ".name", then renamed."""
        hidden = os.path.join(root, "." + name)
        shutil.copytree(os.path.join(self.models, model), hidden)
        target = os.path.join(root, name)
        if os.path.exists(target):
            os.rename(target, os.path.join(root, ".old-" + name))
            os.rename(hidden, target)
            shutil.rmtree(os.path.join(root, ".old-" + name))
        else:
            os.rename(hidden, target)

    def test_sighup_adds_removes_and_replaces(self):
        root = self.directory()
        server = self.start_mtserve("--workers=1", f"--model_dir={root}", "--model_dir_poll=0")
        self.assertEqual(self.names(server), ["base"])
        self.assertEqual(self.info(server, "base"), [("fr", "en")])
        self.assertEqual(self.rescans(server), {"changed": 0, "unchanged": 0, "failed": 0})

        self.copy_in(root, "multi30k-en-de", "m")
        server.process.send_signal(signal.SIGHUP)
        self.wait_names(server, lambda names: "m" in names)
        self.assertEqual(self.translate(server, "m", TEXT), self.expected["multi30k-en-de"])
        self.wait_metric(server, "mtserve_model_rescans_total", 1, result="changed")
        self.assertEqual(self.info(server, "m"), [("en", "de")])

        # Other files under the same name: the new model's translation, not the cached one; its
        # languages in mtserve_model_info, the old model's series gone.
        self.copy_in(root, "multi30k-de-en", "m")
        before = self.names(server)
        server.process.send_signal(signal.SIGHUP)
        server.wait_for("model m replaced")
        self.assertEqual(self.names(server), before)
        self.assertEqual(self.translate(server, "m", TEXT), self.expected["multi30k-de-en"])
        self.wait_metric(server, "mtserve_model_rescans_total", 2, result="changed")
        self.assertEqual(self.info(server, "m"), [("de", "en")])

        shutil.rmtree(os.path.join(root, "m"))
        server.process.send_signal(signal.SIGHUP)
        self.wait_names(server, lambda names: "m" not in names)
        with self.assertRaises(grpc.RpcError) as refused:
            self.translate(server, "m", TEXT)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(self.translate(server, "base", "Un chat dort."),
                         self.translate(server, "", "Un chat dort."))
        self.wait_metric(server, "mtserve_model_rescans_total", 3, result="changed")
        self.assertEqual(self.info(server, "m"), [])
        self.assertEqual(self.info(server, "base"), [("fr", "en")])

        # Nothing changed.
        server.process.send_signal(signal.SIGHUP)
        self.wait_metric(server, "mtserve_model_rescans_total", 1, result="unchanged")
        self.assertEqual(self.rescans(server), {"changed": 3, "unchanged": 1, "failed": 0})

        # A folder that does not scan: failed at each re-read, said once; served once fixed.
        bad = os.path.join(root, ".bad")
        shutil.copytree(os.path.join(self.models, "multi30k-en-de"), bad)
        with open(os.path.join(bad, "mtserve.json"), "w") as f:
            f.write('{"name": ')
        os.rename(bad, os.path.join(root, "bad"))
        said = r"^mtserve: --model_dir: .*/bad/mtserve\.json: .*\(what it served is kept\)$"
        for failed in (1, 2):
            server.process.send_signal(signal.SIGHUP)
            self.wait_metric(server, "mtserve_model_rescans_total", failed, result="failed")
        self.assertEqual(len(re.findall(said, server.stderr(), re.MULTILINE)), 1,
                         server.stderr())
        with open(os.path.join(root, "bad", "mtserve.json"), "w") as f:
            f.write('{"name": "fixed"}')
        server.process.send_signal(signal.SIGHUP)
        self.wait_names(server, lambda names: "fixed" in names)
        self.wait_metric(server, "mtserve_model_rescans_total", 4, result="changed")
        self.assertEqual(self.rescans(server), {"changed": 4, "unchanged": 1, "failed": 2})
        self.assertEqual(self.info(server, "fixed"), [("en", "de")])

    def test_a_directory_that_cannot_be_read_keeps_its_models(self):
        root = self.directory()
        self.copy_in(root, "multi30k-en-de", "m")
        # Given with a trailing slash: its folders are still known to be its own.
        server = self.start_mtserve("--workers=1", f"--model_dir={root}/", "--model_dir_poll=0")
        self.assertEqual(self.names(server), ["base", "m"])
        away = root + "-away"
        os.rename(root, away)
        self.addCleanup(shutil.rmtree, away, ignore_errors=True)
        said = rf"^mtserve: --model_dir: --model_dir={re.escape(root)}/: cannot be read: "
        for failed in (1, 2):
            server.process.send_signal(signal.SIGHUP)
            self.wait_metric(server, "mtserve_model_rescans_total", failed, result="failed")
            self.assertEqual(self.names(server), ["base", "m"])
        self.assertEqual(len(re.findall(said, server.stderr(), re.MULTILINE)), 1,
                         server.stderr())
        self.assertEqual(self.info(server, "m"), [("en", "de")])
        os.rename(away, root)
        server.process.send_signal(signal.SIGHUP)
        self.wait_metric(server, "mtserve_model_rescans_total", 1, result="unchanged")
        self.assertEqual(self.names(server), ["base", "m"])
        self.assertEqual(self.translate(server, "m", TEXT), self.expected["multi30k-en-de"])
        self.assertEqual(self.rescans(server), {"changed": 0, "unchanged": 1, "failed": 2})

    def test_polling_adds_a_folder(self):
        root = self.directory()
        server = self.start_mtserve("--workers=1", f"--model_dir={root}", "--model_dir_poll=0.2s")
        self.copy_in(root, "multi30k-en-de", "polled")
        self.wait_names(server, lambda names: "polled" in names)
        self.assertEqual(self.translate(server, "polled", TEXT), self.expected["multi30k-en-de"])
        # One re-read added it; the others found nothing new.
        self.wait_metric(server, "mtserve_model_rescans_total", 1, result="changed")
        rescans = self.rescans(server)
        self.assertEqual((rescans["changed"], rescans["failed"]), (1, 0))
        self.assertGreaterEqual(rescans["unchanged"], 1)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
