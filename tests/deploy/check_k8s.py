#!/usr/bin/python3
"""Structural checks of the Kubernetes manifests in deploy/k8s/ (no cluster needed).

Every YAML file parses; every object has apiVersion, kind and metadata.name, with the API
version its kind has in current Kubernetes; kustomization.yaml lists exactly the manifests;
selectors match the pod labels; Service, probe, annotation and ServiceMonitor ports exist on the
container; the ConfigMap's values are strings and name mtserve flags, its listen ports are the
container's; the memory limit holds MTSERVE_MODEL_MEMORY (set beside it) and the rest; the model
repository volume is mounted read-only at /models; MTSERVE_JOB_DIR is a writable emptyDir whose
sizeLimit holds the job results' bound; MTSERVE_GLOSSARY_STORE_DIR is a writable mount; terminationGracePeriodSeconds exceeds the preStop sleep plus MTSERVE_SHUTDOWN_GRACE;
CPU requests and limits equal MTSERVE_WORKERS x MTSERVE_THREADS_PER_WORKER; the HPA targets the
Deployment and its Pods metric is the one the prometheus-adapter rule serves; the ServiceMonitor
gives the job the alert rules select; prometheusrule.yaml holds exactly alerts.yml's groups.
With kubectl on PATH, `kubectl kustomize deploy/k8s` must render the same objects. With
--mtserve (and --mtclient), mtserve itself is started with the ConfigMap's settings.

Not checked here: the objects against the Kubernetes API's schemas (no cluster, no
kubeconform), and behaviour in a cluster (probes, HPA, adapter, operator).

Usage: tests/deploy/check_k8s.py [--mtserve=PATH] [--mtclient=PATH]
"""

import os
import re
import shutil
import subprocess
import sys

import yaml

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
from deploy_lib import (DEPLOY, Checks, alerts_job, alerts_queue_bound, check_env_names,
                        check_compute_type, check_memory_limit, check_model_volume,
                        load_yaml, repository_env, load_yaml_all, parse_byte_size, parse_cpu,
                        parse_duration, parse_memory, run_mtserve)

K8S = os.path.join(DEPLOY, "k8s")
API_VERSIONS = {
    "ConfigMap": "v1", "Service": "v1", "Deployment": "apps/v1",
    "PodDisruptionBudget": "policy/v1", "HorizontalPodAutoscaler": "autoscaling/v2",
    "ServiceMonitor": "monitoring.coreos.com/v1", "PrometheusRule": "monitoring.coreos.com/v1",
}


def matches(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def load_objects(checks):
    """{(kind, name): object} of the manifests kustomization.yaml lists."""
    kustomization = load_yaml(os.path.join(K8S, "kustomization.yaml"))
    checks.expect(kustomization.get("kind") == "Kustomization",
                  "kustomization.yaml is a Kustomization")
    listed = kustomization.get("resources", [])
    on_disk = sorted(f for f in os.listdir(K8S)
                     if f.endswith((".yaml", ".yml")) and f != "kustomization.yaml")
    checks.expect(sorted(listed) == on_disk,
                  f"kustomization.yaml lists every manifest ({len(on_disk)})",
                  f"kustomization.yaml resources {sorted(listed)} != files {on_disk}")
    objects = {}
    for name in on_disk:
        docs = load_yaml_all(os.path.join(K8S, name))
        for doc in docs:
            kind, meta = doc.get("kind"), doc.get("metadata", {})
            if not (doc.get("apiVersion") and kind and meta.get("name")):
                checks.fail(f"{name}: an object without apiVersion, kind or metadata.name")
                continue
            want = API_VERSIONS.get(kind)
            if want != doc["apiVersion"]:
                checks.fail(f"{name}: {kind} {meta['name']} has apiVersion {doc['apiVersion']}, "
                            f"want {want}")
            objects[(kind, meta["name"])] = doc
    checks.ok(f"{len(on_disk)} manifests parse: "
              + ", ".join(f"{k}/{n}" for k, n in sorted(objects)))
    return objects


def one(objects, kind):
    found = [o for (k, _), o in objects.items() if k == kind]
    if len(found) != 1:
        raise SystemExit(f"FAIL: want one {kind}, found {len(found)}")
    return found[0]


def check_job_volume(checks, env, container, pod):
    """MTSERVE_JOB_DIR is a writable emptyDir (the root filesystem is read-only) whose sizeLimit
    holds MTSERVE_JOB_RESULTS_BYTES and one result being written (MTSERVE_MAX_FILE_BYTES)."""
    job_dir = env.get("MTSERVE_JOB_DIR", "")
    if not checks.expect(job_dir != "", "MTSERVE_JOB_DIR is set (results on a volume, not in "
                         "memory)"):
        return
    mount = next((m for m in container.get("volumeMounts", []) if m["mountPath"] == job_dir), None)
    if not checks.expect(mount is not None and mount.get("readOnly") is not True,
                         f"MTSERVE_JOB_DIR={job_dir} is a writable volumeMount"):
        return
    volume = next((v for v in pod.get("volumes", []) if v["name"] == mount["name"]), {})
    empty_dir = volume.get("emptyDir")
    if not checks.expect(empty_dir is not None and "sizeLimit" in empty_dir,
                         f"the {mount['name']} volume is an emptyDir with a sizeLimit"):
        return
    needed = (parse_byte_size(env.get("MTSERVE_JOB_RESULTS_BYTES", "1GiB"))
              + parse_byte_size(env.get("MTSERVE_MAX_FILE_BYTES", "10MiB")))
    checks.expect(parse_memory(empty_dir["sizeLimit"]) >= needed,
                  f"the {mount['name']} volume's sizeLimit {empty_dir['sizeLimit']} holds "
                  "MTSERVE_JOB_RESULTS_BYTES plus MTSERVE_MAX_FILE_BYTES")


def check_glossary_volume(checks, env, container):
    """MTSERVE_GLOSSARY_STORE_DIR is a writable volumeMount (the root filesystem is read-only)."""
    store_dir = env.get("MTSERVE_GLOSSARY_STORE_DIR", "")
    mount = next((m for m in container.get("volumeMounts", []) if m["mountPath"] == store_dir),
                 None)
    checks.expect(store_dir != "" and mount is not None and mount.get("readOnly") is not True,
                  f"MTSERVE_GLOSSARY_STORE_DIR={store_dir} is a writable volumeMount")


def check(checks, options):
    objects = load_objects(checks)
    deployment = one(objects, "Deployment")
    config = one(objects, "ConfigMap")
    data = config.get("data", {})
    name = deployment["metadata"]["name"]
    spec = deployment["spec"]
    template = spec["template"]
    pod_labels = template["metadata"]["labels"]
    pod = template["spec"]
    containers = pod["containers"]
    checks.expect(len(containers) == 1, "the pod has one container (mtserve)")
    container = containers[0]
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    numbers = set(ports.values())

    # ConfigMap.
    checks.expect(all(isinstance(v, str) for v in data.values()),
                  "ConfigMap values are all strings",
                  "ConfigMap values must be strings: "
                  + ", ".join(k for k, v in data.items() if not isinstance(v, str)))
    check_env_names(checks, data, "ConfigMap")
    # The container's environment: the ConfigMap's, then its own env (which wins).
    own = {e["name"]: e.get("value") for e in container.get("env", [])}
    check_env_names(checks, own, "Deployment env")
    checks.expect(all(isinstance(v, str) for v in own.values()),
                  "the container's env values are literal strings")
    twice = sorted(set(own) & set(data))
    checks.expect(not twice, "no variable is set both in the ConfigMap and in the container's env",
                  f"{', '.join(twice)} set in both the ConfigMap and the Deployment's env")
    checks.expect("MTSERVE_MODEL_MEMORY" in own,
                  "MTSERVE_MODEL_MEMORY is set in the Deployment, next to the memory limit")
    env = dict(data, **own)
    refs = [e["configMapRef"]["name"] for e in container.get("envFrom", []) if "configMapRef" in e]
    checks.expect(config["metadata"]["name"] in refs,
                  "the container takes its environment from ConfigMap "
                  f"{config['metadata']['name']}")
    for key, port_name in (("MTSERVE_LISTEN", "grpc"), ("MTSERVE_HTTP_LISTEN", "http"),
                           ("MTSERVE_METRICS_LISTEN", "metrics")):
        value = data.get(key, "")
        port = int(value.rsplit(":", 1)[1]) if ":" in value else None
        checks.expect(value.startswith("0.0.0.0:") and ports.get(port_name) == port,
                      f"{key}={value} is container port {port_name}",
                      f"{key}={value!r} vs container port {port_name}={ports.get(port_name)}")
    checks.expect(data.get("MTSERVE_MAX_QUEUED_TEXTS") == str(alerts_queue_bound()),
                  f"MTSERVE_MAX_QUEUED_TEXTS is the {alerts_queue_bound()} the alerts assume")

    # Deployment.
    checks.expect(matches(spec["selector"]["matchLabels"], pod_labels),
                  "Deployment selector matches the pod labels")
    probes = {}
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container.get(kind)
        if not checks.expect(probe is not None and "grpc" in probe, f"{kind} is a gRPC probe"):
            continue
        probes[kind] = probe["grpc"]
        checks.expect(probe["grpc"].get("port") == ports.get("grpc"),
                      f"{kind} probes container port grpc ({probe['grpc'].get('port')})")
    checks.expect(probes.get("readinessProbe", {}).get("service") == "mtserve.v1.Translator",
                  'readinessProbe checks service "mtserve.v1.Translator"')
    checks.expect(probes.get("livenessProbe", {}).get("service", "") == "",
                  'livenessProbe checks service ""')
    startup = container.get("startupProbe", {})
    checks.expect(startup.get("periodSeconds", 10) * startup.get("failureThreshold", 3) >= 60,
                  "startupProbe allows at least 60 s for model loading")

    grace = parse_duration(data.get("MTSERVE_SHUTDOWN_GRACE", "25s"))
    pre_stop = 0
    hook = container.get("lifecycle", {}).get("preStop", {})
    if "exec" in hook:
        command = hook["exec"]["command"]
        if os.path.basename(command[0]) == "sleep":
            pre_stop = float(command[1])
    elif "sleep" in hook:
        pre_stop = float(hook["sleep"]["seconds"])
    termination = pod.get("terminationGracePeriodSeconds", 30)
    checks.expect(termination > pre_stop + grace,
                  f"terminationGracePeriodSeconds {termination} > preStop {pre_stop:g} s + "
                  f"MTSERVE_SHUTDOWN_GRACE {grace:g} s")

    workers = int(data.get("MTSERVE_WORKERS", "0"))
    threads = int(data.get("MTSERVE_THREADS_PER_WORKER", "1"))
    resources = container.get("resources", {})
    requests, limits = resources.get("requests", {}), resources.get("limits", {})
    checks.expect(workers > 0, "MTSERVE_WORKERS is set explicitly (0 would mean the node's cores)")
    checks.expect(parse_cpu(requests.get("cpu", 0)) == workers * threads
                  and parse_cpu(limits.get("cpu", 0)) == workers * threads,
                  f"CPU requests = limits = {workers} workers x {threads} threads",
                  f"CPU requests {requests.get('cpu')} / limits {limits.get('cpu')} vs "
                  f"{workers} x {threads}")
    memory_request, memory_limit = (parse_memory(requests.get("memory", 0)),
                                    parse_memory(limits.get("memory", 0)))
    checks.expect(memory_request == memory_limit,
                  f"memory request {requests.get('memory')} = limit {limits.get('memory')}")
    check_memory_limit(checks, env, memory_limit, "Deployment")
    check_compute_type(checks, data, "ConfigMap")

    annotations = template["metadata"].get("annotations", {})
    checks.expect(annotations.get("prometheus.io/scrape") == "true"
                  and annotations.get("prometheus.io/port") == str(ports.get("metrics"))
                  and annotations.get("prometheus.io/path", "/metrics") == "/metrics",
                  "prometheus.io/* annotations point at the metrics port")
    volumes = {v["name"] for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
    checks.expect(set(mounts.values()) <= volumes, "every volumeMount has its volume")
    check_model_volume(checks, env, {m["mountPath"]: m.get("readOnly") is True
                                     for m in container.get("volumeMounts", [])}, "Deployment")
    check_job_volume(checks, env, container, pod)
    check_glossary_volume(checks, env, container)
    security = pod.get("securityContext", {})
    checks.expect(security.get("runAsNonRoot") is True and security.get("runAsUser", 0) > 0,
                  "pod runs as a non-root user (numeric runAsUser)")

    # Services.
    services = [o for (k, _), o in objects.items() if k == "Service"]
    headless = [s for s in services if s["spec"].get("clusterIP") == "None"]
    checks.expect(len(headless) == 1
                  and any(p["port"] == ports["grpc"] for p in headless[0]["spec"]["ports"]),
                  "a headless Service (clusterIP: None) exposes the gRPC port")
    for service in services:
        sname = service["metadata"]["name"]
        checks.expect(matches(service["spec"].get("selector", {}), pod_labels),
                      f"Service {sname} selects the mtserve pods")
        for port in service["spec"]["ports"]:
            target = port.get("targetPort", port["port"])
            checks.expect(target in ports or target in numbers,
                          f"Service {sname} port {port['port']} -> container port {target}")

    # ServiceMonitor: selects the metrics Service, scrapes its metrics port, job = alerts' job.
    monitor = one(objects, "ServiceMonitor")
    selector = monitor["spec"]["selector"]["matchLabels"]
    selected = [s for s in services if matches(selector, s["metadata"].get("labels", {}))]
    if checks.expect(len(selected) == 1, "the ServiceMonitor selects one Service"):
        service = selected[0]
        port_names = {p.get("name") for p in service["spec"]["ports"]}
        checks.expect(all(e.get("port") in port_names for e in monitor["spec"]["endpoints"]),
                      "ServiceMonitor endpoints are ports of Service "
                      f"{service['metadata']['name']}")
        job = service["metadata"].get("labels", {}).get(monitor["spec"].get("jobLabel", ""),
                                                         service["metadata"]["name"])
        checks.expect(job == alerts_job(), f"the ServiceMonitor's job is {job!r}, the alerts' job",
                      f"ServiceMonitor job {job!r} but the alert rules select {alerts_job()!r}")

    # PrometheusRule = alerts.yml.
    rule = one(objects, "PrometheusRule")
    alerts = load_yaml(os.path.join(DEPLOY, "prometheus", "alerts.yml"))
    checks.expect(rule["spec"]["groups"] == alerts["groups"],
                  "prometheusrule.yaml holds exactly deploy/prometheus/alerts.yml's groups",
                  "prometheusrule.yaml differs from deploy/prometheus/alerts.yml: copy the groups")

    # PodDisruptionBudget and HPA.
    hpa = one(objects, "HorizontalPodAutoscaler")
    hpa_spec = hpa["spec"]
    pdb = one(objects, "PodDisruptionBudget")
    checks.expect(matches(pdb["spec"]["selector"]["matchLabels"], pod_labels),
                  "PodDisruptionBudget selects the mtserve pods")
    checks.expect(pdb["spec"].get("maxUnavailable", 1) < hpa_spec["minReplicas"],
                  "PodDisruptionBudget leaves a pod serving at minReplicas")
    target = hpa_spec["scaleTargetRef"]
    checks.expect(target == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                  f"HPA scales Deployment {name}")
    checks.expect(1 <= hpa_spec["minReplicas"] <= hpa_spec["maxReplicas"]
                  and "replicas" not in spec,
                  "HPA 1 <= minReplicas <= maxReplicas; the Deployment leaves replicas to it",
                  f"HPA replicas {hpa_spec['minReplicas']}..{hpa_spec['maxReplicas']}, Deployment "
                  f"replicas {spec.get('replicas')} (remove it: the HPA owns the count)")
    metrics = hpa_spec["metrics"]
    checks.expect(any(m["type"] == "Resource" and m["resource"]["name"] == "cpu"
                      and m["resource"]["target"]["type"] == "Utilization" for m in metrics),
                  "HPA scales on CPU utilization")
    pods_metrics = [m["pods"]["metric"]["name"] for m in metrics if m["type"] == "Pods"]
    adapter = load_yaml(os.path.join(K8S, "prometheus-adapter", "values.yaml"))
    served = {r["name"]["as"]: r for r in adapter["rules"]["custom"]}
    checks.expect(pods_metrics == ["mtserve_queue_depth"] and "mtserve_queue_depth" in served,
                  "HPA Pods metric mtserve_queue_depth is served by the prometheus-adapter rule")
    adapter_rule = served.get("mtserve_queue_depth", {})
    overrides = adapter_rule.get("resources", {}).get("overrides", {})
    checks.expect(overrides.get("pod", {}).get("resource") == "pod"
                  and overrides.get("namespace", {}).get("resource") == "namespace"
                  and re.match(r"mtserve_queue_depth\{", adapter_rule.get("seriesQuery", "")),
                  "the adapter rule maps the series' namespace and pod labels")

    # kubectl kustomize, where kubectl is installed.
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        print("note: kubectl not found; `kubectl kustomize` not run")
    else:
        result = subprocess.run([kubectl, "kustomize", K8S], capture_output=True, text=True,
                                timeout=120)
        if checks.expect(result.returncode == 0, "kubectl kustomize deploy/k8s renders",
                         f"kubectl kustomize deploy/k8s: {result.stderr}"):
            rendered = {(d["kind"], d["metadata"]["name"])
                        for d in yaml.safe_load_all(result.stdout) if d}
            checks.expect(rendered == set(objects),
                          f"kubectl kustomize renders the {len(objects)} objects",
                          f"kubectl kustomize renders {sorted(rendered)}")

    if "mtserve" in options:
        health = ["mtclient", "health", "--server=127.0.0.1:0",
                  f"--service={probes.get('readinessProbe', {}).get('service', '')}"]
        run_mtserve(checks, options["mtserve"], env, "ConfigMap settings",
                    options.get("mtclient"), health)
        run_mtserve(checks, options["mtserve"], repository_env(env), "model repository",
                    options.get("mtclient"), health)


def main(argv):
    options = dict(a[2:].split("=", 1) for a in argv[1:] if a.startswith("--") and "=" in a)
    if set(options) - {"mtserve", "mtclient"} or [a for a in argv[1:] if "=" not in a]:
        print(__doc__, file=sys.stderr)
        return 2
    checks = Checks("check_k8s")
    check(checks, options)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
