#!/usr/bin/env python3
"""mttranslate and mtserve on checkpoints a hostile tester broke: each refuses the model with one
clear line naming the file, and exits non-zero without crashing (before, nested JSON killed both
with SIGSEGV, a huge max_position_embeddings aborted them, a FIFO hung them, and NaN weights or
a vocab id past the embeddings loaded and broke requests later).

Usage: broken_checkpoint_test.py BIN_DIR MODEL_DIR [-- UNITTEST_ARGS]
"""
import json
import os
import re
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary  # noqa: E402


def read_json(path):
    with open(path) as f:
        return json.load(f)


def copy_model(model_dir, out):
    os.makedirs(out)
    for name in os.listdir(model_dir):
        os.symlink(os.path.join(model_dir, name), os.path.join(out, name))


def replace(out, name, text):
    os.unlink(os.path.join(out, name))
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


# Each breaks the copy `out` of the model in `model_dir` and returns the file the refusal must
# name and what it must say.
def nested_config(model_dir, out):
    replace(out, "config.json", '{"d_model": ' + "[" * 100000 + "]" * 100000 + "}")
    return "config.json", "nested deeper than 64 levels"


def huge_positions(model_dir, out):
    config = read_json(os.path.join(model_dir, "config.json"))
    config["max_position_embeddings"] = 2147483647
    replace(out, "config.json", json.dumps(config))
    return "config.json", "'max_position_embeddings' is 2147483647; the limit is"


def fifo_config(model_dir, out):
    os.unlink(os.path.join(out, "config.json"))
    os.mkfifo(os.path.join(out, "config.json"))
    return "config.json", "not a regular file"


def nan_weight(model_dir, out):
    with open(os.path.join(model_dir, "model.safetensors"), "rb") as f:
        data = bytearray(f.read())
    header_size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + header_size])
    name = "model.decoder.layers.1.fc1.weight"
    entry = header[name]
    nan = {"F16": b"\x00\x7e", "BF16": b"\xc0\x7f", "F32": b"\x00\x00\xc0\x7f"}[entry["dtype"]]
    start = 8 + header_size + entry["data_offsets"][0] + 5 * len(nan)
    data[start:start + len(nan)] = nan
    os.unlink(os.path.join(out, "model.safetensors"))
    with open(os.path.join(out, "model.safetensors"), "wb") as f:
        f.write(data)
    return "model.safetensors", f"tensor '{name}' holds nan at index 5"


def vocab_id_past_embeddings(model_dir, out):
    vocab = read_json(os.path.join(model_dir, "vocab.json"))
    size = read_json(os.path.join(model_dir, "config.json"))["vocab_size"]
    vocab["\u2581zzqx"] = size
    replace(out, "vocab.json", json.dumps(vocab))
    return "vocab.json", f"piece '\u2581zzqx' has id {size}, outside the model's vocabulary"


class BrokenCheckpointTest(e2e_suite.MtserveTestCase):
    """Each binary refuses each broken checkpoint with one line and a plain failure status."""

    def refuse(self, case):
        """Runs mttranslate and mtserve (each a subtest) on the model broken by `case`."""
        out = os.path.join(self.temp_dir(), case.__name__)
        model_dir = os.path.abspath(e2e_suite.ARGS.model_dir)
        copy_model(model_dir, out)
        file, needle = case(model_dir, out)
        with self.subTest("mttranslate"):
            self.check_refused([binary("mttranslate"), f"--model={out}"], "A dog runs.\n", file,
                               needle)
        with self.subTest("mtserve"):
            self.check_refused([binary("mtserve"), f"--model=m={out}", "--listen=127.0.0.1:0",
                                "--metrics_listen=", "--http_listen="], "", file, needle)

    def check_refused(self, command, stdin, file, needle):
        run = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        last = lines[-1] if lines else ""
        stderr = f"\n--- stderr's end:\n{run.stderr[-1500:]}"
        self.assertTrue(0 < run.returncode < 128,
                        f"exit status {run.returncode} (want a plain failure, not a signal)" +
                        stderr)
        self.assertTrue(file in last and needle in last,
                        f"last line does not name {file} and say {needle!r}" + stderr)
        self.assertLessEqual(len(last), 400, f"message of {len(last)} bytes" + stderr)

    def test_nested_config(self):
        self.refuse(nested_config)

    def test_huge_positions(self):
        self.refuse(huge_positions)

    def test_fifo_config(self):
        self.refuse(fifo_config)

    def test_nan_weight(self):
        self.refuse(nan_weight)

    def test_vocab_id_past_embeddings(self):
        self.refuse(vocab_id_past_embeddings)


class PortsOpenTest(e2e_suite.MtserveTestCase):
    """mtserve with its HTTP and metrics ports open when the model fails to load: it ends right
    after its message, status 1, rather than running destructors that stop the HTTP servers in
    their own time and answer scrapes meanwhile: a scrape sent once the message is read must find
    no server."""

    def test_exits_right_after_the_message(self):
        out = os.path.join(self.temp_dir(), "model")
        copy_model(os.path.abspath(e2e_suite.ARGS.model_dir), out)
        file, needle = nested_config(e2e_suite.ARGS.model_dir, out)
        server = self.start_mtserve(f"--model=m={out}", wait_serving=False)
        server.wait_for(re.escape(needle))
        answered = True
        try:
            server.metrics()
        except OSError:
            answered = False  # Refused or reset: the process is gone.
        status = server.process.wait(timeout=120)
        stderr = f"\n--- stderr's end:\n{server.stderr()[-1500:]}"
        self.assertFalse(answered, "a scrape was answered after the message" + stderr)
        self.assertEqual(status, 1, f"exit status {status} (want 1)" + stderr)
        self.assertIn(file, server.stderr(), f"the message does not name {file}" + stderr)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "model_dir")

