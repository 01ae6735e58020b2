#!/usr/bin/env python3
"""mttranslate and mtserve on checkpoints a hostile tester broke: each refuses the model with one
clear line naming the file, and exits non-zero without crashing (before, nested JSON killed both
with SIGSEGV, a huge max_position_embeddings aborted them, a FIFO hung them, and NaN weights or
a vocab id past the embeddings loaded and broke requests later).

Usage: broken_checkpoint_test.py BIN_DIR MODEL_DIR
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../scripts/lib"))
from mtserve_process import MtserveProcess  # noqa: E402


def copy_model(model_dir, out):
    os.makedirs(out)
    for name in os.listdir(model_dir):
        os.symlink(os.path.join(model_dir, name), os.path.join(out, name))


def replace(out, name, text):
    os.unlink(os.path.join(out, name))
    with open(os.path.join(out, name), "w") as f:
        f.write(text)


def nested_config(model_dir, out):
    replace(out, "config.json", '{"d_model": ' + "[" * 100000 + "]" * 100000 + "}")
    return "config.json", "nested deeper than 64 levels"


def huge_positions(model_dir, out):
    config = json.load(open(os.path.join(model_dir, "config.json")))
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
    vocab = json.load(open(os.path.join(model_dir, "vocab.json")))
    size = json.load(open(os.path.join(model_dir, "config.json")))["vocab_size"]
    vocab["\u2581zzqx"] = size
    replace(out, "vocab.json", json.dumps(vocab))
    return "vocab.json", f"piece '\u2581zzqx' has id {size}, outside the model's vocabulary"


CASES = [nested_config, huge_positions, fifo_config, nan_weight, vocab_id_past_embeddings]


def check(name, command, stdin, file, needle):
    run = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    problems = []
    if run.returncode <= 0 or run.returncode >= 128:
        problems.append(f"exit status {run.returncode} (want a plain failure, not a signal)")
    if file not in last or needle not in last:
        problems.append(f"last line does not name {file} and say {needle!r}")
    if len(last) > 400:
        problems.append(f"message of {len(last)} bytes")
    print(("ok   " if not problems else "FAIL ") + name + ("" if not problems else ": " +
          "; ".join(problems) + "\n" + run.stderr[-1500:]))
    return not problems


def check_with_ports_open(name, binary, out, file, needle):
    """mtserve with its HTTP and metrics ports open when the model fails to load: it ends right
    after its message, status 1. Before, it ran its destructors, which waited for civetweb's
    listening threads (2 s each) and went on answering scrapes meanwhile, exiting 4 s after the
    message: a scrape sent once the message is read must find no server."""
    server = MtserveProcess(binary, f"--model=m={out}", wait_serving=False)
    problems = []
    try:
        server.wait_for(re.escape(needle))
        try:
            server.metrics()
            problems.append("a scrape was answered after the message")
        except OSError:
            pass  # Refused or reset: the process is gone.
        status = server.process.wait(timeout=120)
        if status != 1:
            problems.append(f"exit status {status} (want 1)")
        if file not in server.stderr():
            problems.append(f"the message does not name {file}")
    finally:
        stderr = server.stderr()
        server.stop()
    print(("ok   " if not problems else "FAIL ") + name + ("" if not problems else ": " +
          "; ".join(problems) + "\n" + stderr[-1500:]))
    return not problems


def main():
    bin_dir, model_dir = sys.argv[1], os.path.abspath(sys.argv[2])
    results = []
    with tempfile.TemporaryDirectory(prefix="mtserve_broken_") as tmp:
        for case in CASES:
            out = os.path.join(tmp, case.__name__)
            copy_model(model_dir, out)
            file, needle = case(model_dir, out)
            results.append(check(f"mttranslate, {case.__name__}",
                                 [os.path.join(bin_dir, "mttranslate"), f"--model={out}"],
                                 "A dog runs.\n", file, needle))
            results.append(check(f"mtserve, {case.__name__}",
                                 [os.path.join(bin_dir, "mtserve"), f"--model=m={out}",
                                  "--listen=127.0.0.1:0", "--metrics_listen=",
                                  "--http_listen="],
                                 "", file, needle))
            if case is nested_config:
                results.append(check_with_ports_open(
                    f"mtserve with its ports open, {case.__name__}",
                    os.path.join(bin_dir, "mtserve"), out, file, needle))
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
