#!/usr/bin/python3
"""Structural checks of the compose stack: deploy/compose/compose.yaml, the Prometheus config it
mounts, Grafana's provisioning and the dashboard JSON. No container engine is needed: the files
are parsed and cross-checked. With --mtserve (and --mtclient), mtserve itself is started with
the compose file's MTSERVE_* defaults, and the compose healthcheck's command is run against it.

Usage: tests/deploy/check_compose.py [--mtserve=PATH] [--mtclient=PATH]
"""

import json
import os
import re
import sys

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
from deploy_lib import (DEPLOY, ROOT, Checks, alerts_job, alerts_queue_bound, check_env_names,
                        check_compute_type, check_memory_limit, check_model_volume,
                        parse_memory, repository_env,
                        load_yaml, parse_duration, run_mtserve)
import promql_refs

COMPOSE_DIR = os.path.join(DEPLOY, "compose")
COMPOSE = os.path.join(COMPOSE_DIR, "compose.yaml")
IMAGE = "localhost/mtserve:latest"
GRPC_PORT, HTTP_PORT, METRICS_PORT = 50051, 8080, 9464
# Metrics without a model label (prefixes).
PROCESS_WIDE = ("process_", "mtserve_cache_", "mtserve_model_memory_budget_bytes",
                "mtserve_model_rescans_total", "mtserve_file_job")
# The model repository's metrics (serving/metrics.h), each shown in the dashboard's Models row.
MODEL_METRICS = ("mtserve_model_loads_total", "mtserve_model_load_seconds",
                 "mtserve_model_unloads_total", "mtserve_model_resident_bytes",
                 "mtserve_model_memory_budget_bytes", "mtserve_model_rescans_total")


def default(value):
    """value with compose's "${VAR:-default}" and "${VAR}" replaced by their defaults."""
    return re.sub(r"\$\{\w+(?::?-([^}]*))?\}", lambda m: m.group(1) or "", str(value))


def env_dict(service):
    env = service.get("environment", {})
    if isinstance(env, list):
        env = dict(e.split("=", 1) for e in env)
    return {k: default(v) for k, v in env.items()}


def mounts(service):
    """{container path: host path (absolute if a bind mount, else the volume name)}."""
    out = {}
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            source, target = volume.get("source", ""), volume["target"]
        else:
            source, target = default(volume).split(":")[:2]
        if source.startswith((".", "/")):
            source = os.path.normpath(os.path.join(COMPOSE_DIR, source))
        out[target] = source
    return out


def read_only(service):
    """{container path: whether mounted read-only} of the volumes list."""
    out = {}
    for volume in service.get("volumes", []):
        if isinstance(volume, dict):
            out[volume["target"]] = bool(volume.get("read_only"))
        else:
            parts = default(volume).split(":")
            out[parts[1]] = len(parts) > 2 and "ro" in parts[2].split(",")
    return out


def published(service):
    """{container port: host binding} of the ports list."""
    out = {}
    for port in service.get("ports", []):
        parts = str(port).split(":")
        out[int(parts[-1].split("/")[0])] = ":".join(parts[:-1])
    return out


def pinned(image):
    """Whether an image reference has a version tag (not latest)."""
    return re.search(r":v?\d+\.\d+[^:/]*$", image) is not None


def check_compose(checks, args):
    compose = load_yaml(COMPOSE)
    checks.ok("compose.yaml parses as YAML")
    services = compose.get("services", {})
    checks.expect({"mtserve", "prometheus", "grafana"} <= set(services),
                  "services mtserve, prometheus and grafana")
    mt = services["mtserve"]
    checks.expect(mt.get("image") == IMAGE, f"mtserve image is {IMAGE}")
    build = mt.get("build", {})
    context = os.path.normpath(os.path.join(COMPOSE_DIR, build.get("context", "")))
    checks.expect(context == ROOT and build.get("dockerfile", "Dockerfile") == "Dockerfile",
                  "mtserve builds from the repository root's Dockerfile",
                  f"mtserve build context {context} / {build.get('dockerfile')}: want {ROOT} and "
                  "Dockerfile")
    checks.expect(os.path.exists(os.path.join(ROOT, "Dockerfile")),
                  "the repository root has the Dockerfile", "no Dockerfile at the repository root")

    env = env_dict(mt)
    check_env_names(checks, env, "compose mtserve environment")
    ports = published(mt)
    checks.expect(env.get("MTSERVE_LISTEN") == f"0.0.0.0:{GRPC_PORT}" and GRPC_PORT in ports,
                  f"mtserve listens on 0.0.0.0:{GRPC_PORT} and publishes it")
    checks.expect(env.get("MTSERVE_HTTP_LISTEN") == f"0.0.0.0:{HTTP_PORT}" and HTTP_PORT in ports,
                  f"mtserve serves HTTP on 0.0.0.0:{HTTP_PORT} and publishes it")
    checks.expect(env.get("MTSERVE_METRICS_LISTEN") == f"0.0.0.0:{METRICS_PORT}"
                  and METRICS_PORT in ports,
                  f"mtserve serves metrics on 0.0.0.0:{METRICS_PORT} and publishes it")
    check_model_volume(checks, env, read_only(mt), "compose mtserve")
    store_dir = env.get("MTSERVE_GLOSSARY_STORE_DIR", "")
    checks.expect(store_dir != "" and store_dir in mounts(mt)
                  and read_only(mt).get(store_dir) is False,
                  f"MTSERVE_GLOSSARY_STORE_DIR={store_dir} is a writable volume (kept across "
                  "restarts)")
    checks.expect(str(env.get("MTSERVE_MAX_QUEUED_TEXTS")) == str(alerts_queue_bound()),
                  f"MTSERVE_MAX_QUEUED_TEXTS is the {alerts_queue_bound()} the alerts assume",
                  f"MTSERVE_MAX_QUEUED_TEXTS={env.get('MTSERVE_MAX_QUEUED_TEXTS')} but "
                  f"MtserveQueueNearlyFull assumes {alerts_queue_bound()}")
    workers, threads = int(env["MTSERVE_WORKERS"]), int(env["MTSERVE_THREADS_PER_WORKER"])
    checks.expect(workers > 0 and threads > 0,
                  "MTSERVE_WORKERS and MTSERVE_THREADS_PER_WORKER are set explicitly (> 0)")

    # Compose's m and g are binary units (MiB, GiB).
    mem_limit = str(mt.get("mem_limit", "0")).replace("m", "Mi").replace("g", "Gi")
    check_memory_limit(checks, env, parse_memory(mem_limit), "compose mtserve")
    check_compute_type(checks, env, "compose mtserve")

    grace = parse_duration(env.get("MTSERVE_SHUTDOWN_GRACE", "25s"))
    stop = parse_duration(mt.get("stop_grace_period", "10s"))
    checks.expect(stop > grace,
                  f"stop_grace_period {stop:g} s > MTSERVE_SHUTDOWN_GRACE {grace:g} s")
    checks.expect(mt.get("stop_signal", "SIGTERM") in ("SIGTERM", "TERM", "SIGINT", "INT"),
                  "stop signal is SIGTERM (mtserve drains on it)")

    health = mt.get("healthcheck", {})
    test = health.get("test", [])
    checks.expect(isinstance(test, list) and test[:2] == ["CMD", "/opt/mtserve/bin/mtclient"]
                  and "health" in test and f"--server=127.0.0.1:{GRPC_PORT}" in test,
                  "healthcheck runs /opt/mtserve/bin/mtclient health on the gRPC port",
                  f"healthcheck test is {test}")
    checks.expect(parse_duration(health.get("timeout", "30s"))
                  < parse_duration(health.get("interval", "30s"))
                  and parse_duration(health.get("start_period", "0s")) >= 30,
                  "healthcheck timeout < interval, start_period >= 30 s for model loading")

    # Prometheus: its config and rules mounted where the command and rule_files expect them.
    prom = services["prometheus"]
    checks.expect(pinned(prom.get("image", "")) and prom["image"].startswith("prom/prometheus:"),
                  f"prometheus image pinned ({prom.get('image')})")
    config_arg = next((a.split("=", 1)[1] for a in prom.get("command", [])
                       if a.startswith("--config.file=")), "/etc/prometheus/prometheus.yml")
    prom_mounts = mounts(prom)
    config_path = prom_mounts.get(config_arg)
    checks.expect(config_path == os.path.join(DEPLOY, "prometheus", "prometheus.yml"),
                  f"deploy/prometheus/prometheus.yml is mounted at {config_arg}",
                  f"{config_arg} is mounted from {config_path}")
    config = load_yaml(config_path)
    for rule_file in config.get("rule_files", []):
        in_container = os.path.normpath(os.path.join(os.path.dirname(config_arg), rule_file))
        source = prom_mounts.get(in_container)
        checks.expect(source is not None and os.path.isfile(source),
                      f"rule file {rule_file} is mounted at {in_container}",
                      f"rule file {rule_file}: nothing mounted at {in_container}")
        checks.expect(source == promql_refs.ALERTS,
                      f"{in_container} is deploy/prometheus/alerts.yml")
    job = alerts_job()
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    targets = [t for sc in jobs.get(job, {}).get("static_configs", []) for t in sc["targets"]]
    checks.expect(f"mtserve:{METRICS_PORT}" in targets,
                  f"job {job} (the alerts' job) scrapes mtserve:{METRICS_PORT}",
                  f"job {job} targets are {targets}")

    # Grafana: provisioning mounted, datasource pointing at the prometheus service, dashboards
    # where the provider looks.
    graf = services["grafana"]
    checks.expect(pinned(graf.get("image", "")) and graf["image"].startswith("grafana/grafana:"),
                  f"grafana image pinned ({graf.get('image')})")
    graf_mounts = mounts(graf)
    provisioning = graf_mounts.get("/etc/grafana/provisioning")
    checks.expect(provisioning == os.path.join(DEPLOY, "grafana", "provisioning"),
                  "deploy/grafana/provisioning is mounted at /etc/grafana/provisioning")
    datasources = [d for f in sorted(os.listdir(os.path.join(provisioning, "datasources")))
                   for d in load_yaml(os.path.join(provisioning, "datasources", f))["datasources"]]
    checks.expect(len(datasources) == 1 and datasources[0]["type"] == "prometheus"
                  and datasources[0]["url"] == "http://prometheus:9090",
                  "one Prometheus datasource, at http://prometheus:9090")
    checks.expect(str(datasources[0].get("jsonData", {}).get("timeInterval"))
                  == str(config["global"]["scrape_interval"]),
                  "datasource timeInterval equals Prometheus's scrape_interval")
    providers = [p for f in sorted(os.listdir(os.path.join(provisioning, "dashboards")))
                 for p in load_yaml(os.path.join(provisioning, "dashboards", f))["providers"]]
    for provider in providers:
        path = provider["options"]["path"]
        source = graf_mounts.get(path)
        checks.expect(source == os.path.join(DEPLOY, "grafana", "dashboards"),
                      f"dashboard provider {provider['name']}: deploy/grafana/dashboards is "
                      f"mounted at {path}",
                      f"dashboard provider {provider['name']} reads {path}, mounted from {source}")
    home = env_dict(graf).get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH")
    if home:
        directory, name = os.path.split(home)
        mounted = graf_mounts.get(directory, "/nonexistent")
        checks.expect(os.path.isfile(os.path.join(mounted, name)),
                      f"Grafana's home dashboard {home} is a mounted file")

    # Named volumes are declared.
    declared = set(compose.get("volumes", {}) or {})
    used = {source for s in services.values() for source in mounts(s).values()
            if not source.startswith("/")}
    checks.expect(used <= declared, f"named volumes declared: {', '.join(sorted(used))}",
                  f"volumes used but not declared: {used - declared}")
    return env, datasources[0]["uid"], test


def check_dashboard(checks, datasource_uid):
    path = promql_refs.DASHBOARD
    with open(path) as f:
        dashboard = json.load(f)
    checks.ok("mtserve.json parses as JSON")
    checks.expect(dashboard.get("uid") and dashboard.get("title") and
                  isinstance(dashboard.get("schemaVersion"), int),
                  "dashboard has uid, title and schemaVersion")
    variables = {v["name"]: v for v in dashboard["templating"]["list"]}
    checks.expect({"datasource", "job", "model", "instance"} <= set(variables),
                  "template variables datasource, job, model, instance")
    ds = variables["datasource"]
    checks.expect(ds["type"] == "datasource" and ds["query"] == "prometheus"
                  and ds["current"]["value"] == datasource_uid,
                  f"$datasource defaults to the provisioned datasource uid {datasource_uid!r}")
    model_query = variables["model"]["query"]
    model_query = model_query["query"] if isinstance(model_query, dict) else model_query
    selector, label = promql_refs.label_values(model_query)
    checks.expect(label == "model" and selector.startswith("mtserve_model_info"),
                  "$model comes from label_values(mtserve_model_info, model)")

    panels, ids = [], []

    def walk(items):
        for panel in items:
            panels.append(panel)
            ids.append(panel.get("id"))
            walk(panel.get("panels", []))
    walk(dashboard["panels"])
    checks.expect(len(ids) == len(set(ids)) and None not in ids, "panel ids are unique")
    # Grid: within 24 columns, no two panels overlapping.
    cells, overlaps = {}, []
    for panel in panels:
        g = panel["gridPos"]
        if g["x"] < 0 or g["x"] + g["w"] > 24:
            overlaps.append(f"{panel['title']} outside the 24 columns")
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    overlaps.append(f"{panel['title']} overlaps {cells[(x, y)]}")
                cells[(x, y)] = panel["title"]
    checks.expect(not overlaps, "panels fit the grid without overlapping",
                  "grid: " + "; ".join(sorted(set(overlaps))[:5]))

    problems, queries = [], 0
    for panel in panels:
        if panel["type"] == "row":
            continue
        where = f"panel {panel['title']!r}"
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            problems.append(f"{where}: datasource is not ${{datasource}}")
        if not panel.get("targets"):
            problems.append(f"{where}: no query")
        ref_ids = [t["refId"] for t in panel.get("targets", [])]
        if len(ref_ids) != len(set(ref_ids)):
            problems.append(f"{where}: duplicate refIds")
        for target in panel.get("targets", []):
            queries += 1
            expr = target["expr"]
            if target.get("datasource", {}).get("uid") != "${datasource}":
                problems.append(f"{where}: a query's datasource is not ${{datasource}}")
            windows = re.findall(r"\[([^\]]*)\]", expr)
            if any(w != "$__rate_interval" for w in windows):
                problems.append(f"{where}: range {windows} instead of [$__rate_interval]")
            refs, _ = promql_refs.parse(expr)
            for ref in refs:
                # Process-wide metrics (the process's own, the cache shared by all models, the
                # models' memory budget, the re-reads of --model_dir, the file jobs) have no model
                # label.
                want = {"job"} if ref.name == "up" else (
                    {"job", "instance"} if ref.name.startswith(PROCESS_WIDE)
                    else {"job", "instance", "model"})
                if not want <= ref.labels:
                    problems.append(f"{where}: {ref.name} is not filtered by "
                                    f"{', '.join(sorted(want - ref.labels))}")
            for var, label in (("$job", "job"), ("$instance", "instance"), ("$model", "model")):
                for m in re.finditer(label + r'\s*(=~|=|!=|!~)\s*"([^"]*)"', expr):
                    if var not in m.group(2) or m.group(1) != "=~":
                        problems.append(f"{where}: {label}{m.group(1)}\"{m.group(2)}\" is not "
                                        f"a regex match on {var}")
    checks.expect(not problems,
                  f"{queries} panel queries: ${{datasource}}, [$__rate_interval], filtered by "
                  "$job, $instance and $model (=~, multi-value safe)",
                  "; ".join(problems))
    titles = " ".join(p["title"].lower() for p in panels)
    for needle in ("requests/s", "error", "latency", "queue depth", "queue wait", "batch size",
                   "generated tokens", "input tokens", "in-flight", "memory", "cpu", "cache",
                   "model memory", "loads and unloads", "load time", "failed model loads",
                   "model directory re-reads"):
        checks.expect(needle in titles, f"a panel about {needle}")

    # The Models row: the panels after it (up to the next row) use every model metric, and one
    # panel draws the loaded bytes against the budget.
    rows = [i for i, p in enumerate(dashboard["panels"]) if p["type"] == "row"]
    models_row = [i for i in rows if dashboard["panels"][i]["title"] == "Models"]
    if checks.expect(len(models_row) == 1, "a row titled Models"):
        start = models_row[0] + 1
        end = min([i for i in rows if i > models_row[0]] + [len(dashboard["panels"])])
        used = {}
        for panel in dashboard["panels"][start:end]:
            for target in panel.get("targets", []):
                for ref in promql_refs.parse(target["expr"])[0]:
                    used.setdefault(re.sub(r"_(bucket|sum|count)$", "", ref.name),
                                    set()).add(panel["title"])
        missing = [m for m in MODEL_METRICS if m not in used]
        checks.expect(not missing, "the Models row uses " + ", ".join(MODEL_METRICS),
                      f"the Models row does not use {', '.join(missing)}")
        together = used.get("mtserve_model_resident_bytes", set()) & used.get(
            "mtserve_model_memory_budget_bytes", set())
        checks.expect(together, "a Models panel shows resident bytes against the budget: "
                      + ", ".join(sorted(together)))


def main(argv):
    options = dict(a[2:].split("=", 1) for a in argv[1:] if a.startswith("--") and "=" in a)
    unknown = set(options) - {"mtserve", "mtclient"} or [a for a in argv[1:] if "=" not in a]
    if unknown:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks("check_compose")
    env, datasource_uid, health = check_compose(checks, options)
    check_dashboard(checks, datasource_uid)
    if "mtserve" in options:
        run_mtserve(checks, options["mtserve"], env, "compose defaults",
                    options.get("mtclient"), health[1:])
        run_mtserve(checks, options["mtserve"], repository_env(env), "compose model repository",
                    options.get("mtclient"), health[1:])
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
