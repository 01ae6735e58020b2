#!/usr/bin/env python3
"""--model_dir re-read while serving, on a real mtserve: a checkpoint folder copied in is served
after SIGHUP (and, separately, after the directory's polling sees it twice the same); one removed
is no longer (NOT_FOUND); one replaced by other files answers with the new model's translation,
never the old one's from the sentence cache. The expectations are each model's translation on a
reference server serving the repository's models/. Waits for events (ListModels changing),
never for a time.

Usage: model_dir_reload_test.py BIN_DIR STUBS_DIR MODELS_DIR [-- unittest arguments]
"""
import os
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

        self.copy_in(root, "multi30k-en-de", "m")
        server.process.send_signal(signal.SIGHUP)
        self.wait_names(server, lambda names: "m" in names)
        self.assertEqual(self.translate(server, "m", TEXT), self.expected["multi30k-en-de"])

        # Other files under the same name: the new model's translation, not the cached one.
        self.copy_in(root, "multi30k-de-en", "m")
        before = self.names(server)
        server.process.send_signal(signal.SIGHUP)
        server.wait_for("model m replaced")
        self.assertEqual(self.names(server), before)
        self.assertEqual(self.translate(server, "m", TEXT), self.expected["multi30k-de-en"])

        shutil.rmtree(os.path.join(root, "m"))
        server.process.send_signal(signal.SIGHUP)
        self.wait_names(server, lambda names: "m" not in names)
        with self.assertRaises(grpc.RpcError) as refused:
            self.translate(server, "m", TEXT)
        self.assertEqual(refused.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(self.translate(server, "base", "Un chat dort."),
                         self.translate(server, "", "Un chat dort."))

    def test_polling_adds_a_folder(self):
        root = self.directory()
        server = self.start_mtserve("--workers=1", f"--model_dir={root}", "--model_dir_poll=0.2s")
        self.copy_in(root, "multi30k-en-de", "polled")
        self.wait_names(server, lambda names: "polled" in names)
        self.assertEqual(self.translate(server, "polled", TEXT), self.expected["multi30k-en-de"])


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir")
