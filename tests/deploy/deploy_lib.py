"""Helpers shared by check_compose.py and check_k8s.py."""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")
ALERTS = os.path.join(DEPLOY, "prometheus", "alerts.yml")


class Checks:
    """Collects check results; `finish` prints the verdict and returns the exit status."""

    def __init__(self, name):
        self.name = name
        self.passed = 0
        self.problems = []

    def ok(self, message):
        self.passed += 1
        print(f"ok: {message}")

    def fail(self, message):
        self.problems.append(message)
        print(f"FAIL: {message}", file=sys.stderr)

    def expect(self, condition, message, failure=None):
        """ok(message) if condition, else fail(failure or message)."""
        if condition:
            self.ok(message)
        else:
            self.fail(failure or f"not true: {message}")
        return condition

    def finish(self):
        if self.problems:
            print(f"{self.name}: FAIL ({len(self.problems)} problems, {self.passed} checks "
                  "passed)", file=sys.stderr)
            return 1
        print(f"{self.name}: PASS ({self.passed} checks)")
        return 0


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def load_yaml_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


def parse_duration(text):
    """Seconds of a Go/absl/compose duration: "25s", "500us", "1m30s", "1.5h"."""
    text = str(text).strip()
    parts = re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def parse_cpu(quantity):
    """Cores of a Kubernetes CPU quantity: "2", "1.5", "500m"."""
    text = str(quantity)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def parse_memory(quantity):
    """Bytes of a Kubernetes memory quantity: "384Mi", "1Gi", "500M", "1000"."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?", str(quantity))
    if m is None:
        raise ValueError(f"not a memory quantity: {quantity!r}")
    scale = {None: 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 1e3, "M": 1e6,
             "G": 1e9, "T": 1e12}[m.group(2)]
    return float(m.group(1)) * scale


# The highest resident memory measured with the embedded model, 2 workers x 1 thread, under
# steady load (tests/e2e/scripts/soak_test.py: 64 clients, beam 4, texts of one to eight sentences):
# 235 MiB. It already holds the decodes of that load; a container limit of this plus each
# worker's --worker_memory therefore holds any load the budget admits (README: "Memory").
# Measured in float32; int8 (what MTSERVE_COMPUTE_TYPE=auto picks on VNNI CPUs) holds less, its
# weights a quarter the size (mttranslate's peak RSS on Multi30k: 57 against 78 MiB).
MEASURED_STEADY_RSS = 235 * 2**20

# What a request being read may hold, per byte of --max_message_bytes, with the HTTP bodies held
# at their bound (README: "Memory", scripts/benchmark_memory.py: the worst body of every
# front end; the stream's, 5 MiB for a 4 MiB body, is the largest).
BODY_RSS_PER_MESSAGE_BYTE = 1.25
DEFAULT_HTTP_THREADS = 16
DEFAULT_HTTP_MAX_QUEUED = 16
DEFAULT_MAX_MESSAGE_BYTES = 4 * 2**20


# What the process holds beyond a model's counted bytes (Model::resident_bytes(), what
# --model_memory counts) after loads: glibc keeps 5 to 18 % more, part of the load's temporary
# float copies (docs/operations.md, "A model's memory"); 20 % of the budget leaves room for it.
MODEL_MEMORY_HEADROOM = 1.2
# Where the deployments mount the model repository (the Dockerfile makes the empty directory).
MODELS_MOUNT = "/models"


def parse_byte_size(value):
    """Bytes of an mtserve byte size flag: "128MiB", "1GiB", "512KiB", "1000"."""
    m = re.fullmatch(r"(\d+)(KiB|MiB|GiB)?", str(value))
    if m is None:
        raise ValueError(f"not a byte size: {value!r}")
    return int(m.group(1)) * {None: 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[m.group(2)]


def check_memory_limit(checks, env, limit, where):
    """The container's memory limit holds the steady load, every worker's budget, the cache, the
    request bodies being read and the models' budget (--model_memory) with glibc's headroom."""
    model_memory = parse_byte_size(env.get("MTSERVE_MODEL_MEMORY") or "0")
    model_dirs = [d for d in (env.get("MTSERVE_MODEL_DIR") or "").split(",") if d]
    checks.expect(model_memory > 0 or not model_dirs,
                  f"{where}: MTSERVE_MODEL_MEMORY bounds the models of MTSERVE_MODEL_DIR",
                  f"{where}: MTSERVE_MODEL_DIR={','.join(model_dirs)} without "
                  "MTSERVE_MODEL_MEMORY: every model of the directory could load, beyond any limit")
    budget = env.get("MTSERVE_WORKER_MEMORY")
    cache = env.get("MTSERVE_CACHE_BYTES")
    checks.expect(cache is not None, f"{where}: MTSERVE_CACHE_BYTES is set")
    checks.expect(budget not in (None, "", "0"), f"{where}: MTSERVE_WORKER_MEMORY is set (> 0)")
    if budget in (None, "", "0"):
        return
    workers = int(env["MTSERVE_WORKERS"])
    # The HTTP bodies held at once are bounded by this many --max_message_bytes.
    http_bodies = (int(env.get("MTSERVE_HTTP_THREADS", DEFAULT_HTTP_THREADS))
                   + int(env.get("MTSERVE_HTTP_MAX_QUEUED", DEFAULT_HTTP_MAX_QUEUED)))
    message_bytes = parse_byte_size(env.get("MTSERVE_MAX_MESSAGE_BYTES",
                                            DEFAULT_MAX_MESSAGE_BYTES))
    needed = (MEASURED_STEADY_RSS + workers * parse_byte_size(budget)
              + parse_byte_size(cache or "0")
              + http_bodies * BODY_RSS_PER_MESSAGE_BYTE * message_bytes
              + MODEL_MEMORY_HEADROOM * model_memory)
    checks.expect(limit >= needed,
                  f"{where}: memory limit {limit / 2**20:.0f} MiB holds the measured steady load "
                  f"(235 MiB) plus {workers} workers x MTSERVE_WORKER_MEMORY {budget} plus "
                  f"MTSERVE_CACHE_BYTES {cache} plus {http_bodies} HTTP bodies (--http_threads + "
                  f"--http_max_queued) x 1.25 x {message_bytes} bytes plus "
                  f"{MODEL_MEMORY_HEADROOM} x MTSERVE_MODEL_MEMORY "
                  f"{env.get('MTSERVE_MODEL_MEMORY') or 0} ({needed / 2**20:.0f} MiB)",
                  f"{where}: memory limit {limit / 2**20:.0f} MiB < {needed / 2**20:.0f} MiB "
                  f"(MTSERVE_MODEL_MEMORY {env.get('MTSERVE_MODEL_MEMORY') or 0} counts "
                  f"{MODEL_MEMORY_HEADROOM} times)")


def check_model_volume(checks, env, mounts, where):
    """The model repository: a volume mounted read-only at /models, and every directory of
    MTSERVE_MODEL_DIR and MTSERVE_MODEL within a mounted volume or the image's own models.
    mounts: {container path: read-only (bool)}."""
    checks.expect(mounts.get(MODELS_MOUNT) is True,
                  f"{where}: the model repository volume is mounted read-only at {MODELS_MOUNT}",
                  f"{where}: want a read-only volume at {MODELS_MOUNT}; mounts: {mounts}")
    dirs = [d for d in (env.get("MTSERVE_MODEL_DIR") or "").split(",") if d]
    dirs += [m.split("=", 1)[-1].split("@")[0]
             for m in (env.get("MTSERVE_MODEL") or "").split(",") if m]
    outside = [d for d in dirs if not any(
        d == m or d.startswith(m.rstrip("/") + "/") for m in list(mounts) + ["/opt/mtserve/models"])]
    checks.expect(not outside,
                  f"{where}: MTSERVE_MODEL_DIR and MTSERVE_MODEL name mounted or embedded models",
                  f"{where}: {', '.join(outside)} lie outside every mounted volume")


# The compute types (model/compute_type.h) every x86-64 CPU runs: not bfloat16, which needs
# AVX-512, and which a deployment's default cannot count on.
PORTABLE_COMPUTE_TYPES = ("float32", "int8", "auto")


def image_env():
    """The MTSERVE_* variables the Dockerfile's ENV sets: {name: value}."""
    with open(os.path.join(ROOT, "Dockerfile")) as f:
        text = f.read().replace("\\\n", " ")
    env = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"(MTSERVE_\w+)=(\S+)", line))
    return env


def check_compute_type(checks, env, where):
    """MTSERVE_COMPUTE_TYPE is set to a type every x86-64 node runs, the image's."""
    value = env.get("MTSERVE_COMPUTE_TYPE")
    checks.expect(value in PORTABLE_COMPUTE_TYPES,
                  f"{where}: MTSERVE_COMPUTE_TYPE={value} runs on any x86-64 CPU",
                  f"{where}: MTSERVE_COMPUTE_TYPE={value!r}: want one of "
                  f"{', '.join(PORTABLE_COMPUTE_TYPES)} (bfloat16 needs AVX-512)")
    image = image_env().get("MTSERVE_COMPUTE_TYPE")
    checks.expect(value == image, f"{where}: MTSERVE_COMPUTE_TYPE is the image's ({image})",
                  f"{where}: MTSERVE_COMPUTE_TYPE={value!r} but the Dockerfile sets {image!r}")


def mtserve_flags():
    """The flags mtserve defines (server/server_flags.cc), each settable as MTSERVE_<FLAG>."""
    with open(os.path.join(ROOT, "server", "server_flags.cc")) as f:
        flags = set(re.findall(r"ABSL_FLAG\([^,]+(?:<[^>]*>)?,\s*(\w+)\s*,", f.read()))
    if "shutdown_grace" not in flags:
        raise RuntimeError(f"cannot read mtserve's flags from server/server_flags.cc: {flags}")
    return flags


def check_env_names(checks, env, where):
    """Every MTSERVE_* variable names a flag of mtserve's."""
    flags = mtserve_flags()
    unknown = [k for k in env if k.startswith("MTSERVE_") and k[8:].lower() not in flags]
    checks.expect(not unknown, f"{where}: every MTSERVE_* variable names an mtserve flag",
                  f"{where}: {', '.join(unknown)} name no flag of mtserve (server/server_flags.cc)")


def alert_rules():
    return {r["alert"]: r for g in load_yaml(ALERTS)["groups"] for r in g["rules"] if "alert" in r}


def alerts_job():
    """The job every alert rule selects (they must agree)."""
    jobs = set()
    for rule in alert_rules().values():
        jobs.update(re.findall(r'job\s*=\s*"([^"]*)"', rule["expr"]))
    if len(jobs) != 1:
        raise RuntimeError(f"the alert rules select jobs {jobs}, not one")
    return jobs.pop()


def alerts_queue_bound():
    """The --max_queued_texts that the MtserveQueueNearlyFull alert assumes."""
    m = re.search(r">\s*[\d.]+\s*\*\s*(\d+)", alert_rules()["MtserveQueueNearlyFull"]["expr"])
    return int(m.group(1))


# The repository's trained models (models/: multi30k-en-de, -de-en, -fr-en), standing in for a
# model volume: what repository_env serves, and a line of Multi30k's test set for one of them.
REPOSITORY_MODELS = os.path.join(ROOT, "models")
REPOSITORY_PRELOAD = "multi30k-en-de"
ON_DEMAND_MODEL, ON_DEMAND_TEXT = "multi30k-de-en", "Ein Mann fährt Fahrrad."


def repository_env(env):
    """A deployment's settings with its model volume holding the repository's models: served with
    MTSERVE_MODEL_DIR (the volume's path on the host), one preloaded, within the deployment's
    MTSERVE_MODEL_MEMORY (what run_mtserve then checks)."""
    out = dict(env)
    out.update(MTSERVE_MODEL_DIR=REPOSITORY_MODELS, MTSERVE_PRELOAD=REPOSITORY_PRELOAD,
               MTSERVE_MODEL="")
    return out


def _http(port, path, body=None):
    """(status, parsed JSON) of a request to mtserve's HTTP API on loopback."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")


def _metric(port, name):
    """The value of an unlabelled metric in mtserve's /metrics, or None."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        for line in response.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return None


def check_repository(checks, ready, env, where):
    """With MTSERVE_MODEL_DIR: /v1/models lists each checkpoint of the directories, the preloaded
    ones loaded; a request for another loads it on demand; mtserve_model_memory_budget_bytes is
    MTSERVE_MODEL_MEMORY."""
    dirs = [d for d in env["MTSERVE_MODEL_DIR"].split(",") if d]
    expected = sorted(name for d in dirs for name in os.listdir(d)
                      if os.path.isfile(os.path.join(d, name, "config.json")))
    status, body = _http(ready["http"], "/v1/models")
    states = {m["name"]: m.get("state") for m in body["models"]} if status == 200 else {}
    checks.expect(sorted(states) == expected,
                  f"{where}: /v1/models lists the directory's checkpoints ({', '.join(expected)})",
                  f"{where}: /v1/models answered {status}: {body}; want {expected}")
    preload = [n for n in (env.get("MTSERVE_PRELOAD") or "").split(",") if n]
    checks.expect(all(states.get(n) == "MODEL_STATE_LOADED" for n in preload)
                  and states.get(ON_DEMAND_MODEL) == "MODEL_STATE_AVAILABLE",
                  f"{where}: {', '.join(preload)} loaded at start, {ON_DEMAND_MODEL} not yet",
                  f"{where}: states at start {states}")
    status, body = _http(ready["http"], "/v1/translate",
                         {"texts": [ON_DEMAND_TEXT], "model": ON_DEMAND_MODEL})
    checks.expect(status == 200 and body["translations"][0]["hypotheses"][0]["text"],
                  f"{where}: a request for {ON_DEMAND_MODEL} loads it and is answered",
                  f"{where}: /v1/translate for {ON_DEMAND_MODEL} answered {status}: {body}")
    budget = parse_byte_size(env.get("MTSERVE_MODEL_MEMORY") or "0")
    served = _metric(ready["metrics"], "mtserve_model_memory_budget_bytes")
    checks.expect(served == budget,
                  f"{where}: mtserve_model_memory_budget_bytes is MTSERVE_MODEL_MEMORY ({budget})",
                  f"{where}: mtserve_model_memory_budget_bytes {served}, want {budget}")


def run_mtserve(checks, mtserve, env, where, mtclient=None, health_command=None):
    """Starts mtserve with exactly these MTSERVE_* variables (on loopback ports the kernel
    chooses: the command line wins over MTSERVE_LISTEN), checks that it serves with the workers
    and threads the variables ask for, runs the health check command (its server address
    pointed at this server, its program at mtclient), then SIGTERM: it must drain and exit 0
    within the shutdown grace. Returns nothing; results go to checks."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MTSERVE_")}
    environment.update(env)
    with tempfile.TemporaryFile("w+") as log, tempfile.TemporaryDirectory() as tmp:
        ready_file = os.path.join(tmp, "ready.json")
        # The volumes mtserve writes (the container's /glossaries) are made in this run's own
        # directory, not at the host's root.
        for variable in ("MTSERVE_GLOSSARY_STORE_DIR",):
            if environment.get(variable):
                environment[variable] = os.path.join(tmp, variable.lower())
        process = subprocess.Popen(
            [mtserve, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
             "--http_listen=127.0.0.1:0", f"--ready_file={ready_file}"], env=environment,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        try:
            _run_mtserve(checks, process, log, ready_file, env, where, mtclient, health_command)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def _read(log):
    log.seek(0)
    return log.read()


def _ready(ready_file):
    """mtserve's ready file (a dict), or None before it is written."""
    try:
        with open(ready_file) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def _run_mtserve(checks, process, log, ready_file, env, where, mtclient, health_command):
    ready = None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        ready = _ready(ready_file)
        if ready is not None and ready["state"] == "serving":
            break
        time.sleep(0.1)
    serving = re.search(r"^mtserve: serving \((\d+) workers x (\d+) threads\)", _read(log),
                        re.MULTILINE)
    if not checks.expect(serving is not None and ready is not None
                         and ready["state"] == "serving",
                         f"{where}: mtserve starts with these settings",
                         f"{where}: mtserve did not serve with these settings (its ready file: "
                         f"{ready}):\n" + _read(log)):
        return
    port = ready["grpc"]
    workers = int(env.get("MTSERVE_WORKERS", "0"))
    threads = int(env.get("MTSERVE_THREADS_PER_WORKER", "1"))
    checks.expect((int(serving.group(1)), int(serving.group(2))) == (workers, threads),
                  f"{where}: mtserve serves with {workers} workers x {threads} threads",
                  f"{where}: mtserve says {serving.group(0).strip()}, not {workers} x {threads}")
    asked = env.get("MTSERVE_COMPUTE_TYPE") or "float32"
    served = re.findall(r"^mtserve: model \S+ \(.*; (\w+)\) loaded from", _read(log), re.MULTILINE)
    wanted = ("int8", "float32") if asked == "auto" else (asked,)
    checks.expect(served and all(t in wanted for t in served),
                  f"{where}: mtserve computes in {asked} ({', '.join(served)})",
                  f"{where}: MTSERVE_COMPUTE_TYPE={asked} but mtserve loaded its models as "
                  f"{served}:\n" + _read(log))
    if env.get("MTSERVE_MODEL_DIR"):
        check_repository(checks, ready, env, where)
    if mtclient and health_command:
        command = [mtclient] + [re.sub(r"^--server=.*", f"--server=127.0.0.1:{port}", a)
                                for a in health_command[1:]]
        result = subprocess.run(command, capture_output=True, text=True, timeout=30)
        checks.expect(result.returncode == 0 and result.stdout.strip() == "SERVING",
                      f"{where}: the health check command answers SERVING",
                      f"{where}: {' '.join(command)} exited {result.returncode}: "
                      f"{result.stdout}{result.stderr}")
    grace = parse_duration(env.get("MTSERVE_SHUTDOWN_GRACE", "25s"))
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace + 5)
    except subprocess.TimeoutExpired:
        checks.fail(f"{where}: mtserve did not exit within the shutdown grace after SIGTERM")
        return
    checks.expect(process.returncode == 0 and "mtserve: stopped" in _read(log),
                  f"{where}: SIGTERM drains and exits 0",
                  f"{where}: after SIGTERM mtserve exited {process.returncode}:\n" + _read(log))
