#!/usr/bin/python3
"""The PromQL that mtserve's deployment files run, and checks of it against a real server.

Collects every PromQL expression of deploy/grafana/dashboards/mtserve.json (panel targets and
template variables), deploy/prometheus/alerts.yml and the prometheus-adapter rule
(deploy/k8s/prometheus-adapter/values.yaml), extracts the metric names and label names they use,
and checks them:

  promql_refs.py self-test
      the extractor on hand-written expressions (so that the checks below cannot pass vacuously).
  promql_refs.py list
      prints each expression's metric names.
  promql_refs.py check-scrape SCRAPE_FILE
      every metric referenced is one the scrape (mtserve's /metrics text) exports: a family of its
      `# TYPE` lines, with _bucket/_sum/_count for histograms, or Prometheus's own (`up`); every
      label in a selector or a by/without/on/ignoring list is one that metric has (or a target
      label Prometheus adds).
  promql_refs.py check-live PROMETHEUS_URL
      against a Prometheus that scrapes a live mtserve as job "mtserve" and loads alerts.yml:
      every dashboard query (Grafana variables substituted) and the adapter's query run without
      error and return data, every template variable finds values, every alert rule is loaded
      and evaluates without error.
"""

import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "dashboards", "mtserve.json")
ALERTS = os.path.join(ROOT, "deploy", "prometheus", "alerts.yml")
ADAPTER = os.path.join(ROOT, "deploy", "k8s", "prometheus-adapter", "values.yaml")

# Series Prometheus makes itself for every target (no exporter has to export them).
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                  "scrape_samples_post_metric_relabeling", "scrape_series_added"}
# Labels Prometheus attaches to every scraped series: job and instance always; namespace and pod
# with Kubernetes discovery (the ServiceMonitor, the kubernetes-pods job), which the adapter
# rule relies on.
TARGET_LABELS = {"job", "instance", "namespace", "pod"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "inf", "nan"}
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile", "limitk", "limit_ratio"}

# What Grafana variables stand for in check-live (the test's Prometheus calls the job "mtserve").
LIVE_VARIABLES = {"job": "mtserve", "model": ".*", "instance": ".*", "datasource": "prometheus",
                  "__rate_interval": "1m", "__interval": "15s", "__range": "1h"}

_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_NUMBER = re.compile(
    r"(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
    r"(?:ms|s|m|h|d|w|y)*(?:\d+(?:ms|s|m|h|d|w|y))*")
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'
                      r"'(?:[^'\\]|\\.)*'|`[^`]*`)\s*,?")


class Ref:
    """One vector selector: its metric name and the label names its matchers use."""

    def __init__(self, name, labels):
        self.name = name
        self.labels = labels

    def __repr__(self):
        return f"{self.name}{{{','.join(sorted(self.labels))}}}"


def substitute(expr, variables=None):
    """Replaces Grafana's $var, ${var} and ${var:format} by their values."""
    values = dict(LIVE_VARIABLES)
    values.update(variables or {})

    def value(match):
        name = match.group(1) or match.group(2)
        if name not in values:
            raise ValueError(f"unknown Grafana variable ${name} in: {expr}")
        return values[name]
    return re.sub(r"\$\{([a-zA-Z_]\w*)(?::\w+)?\}|\$([a-zA-Z_]\w*)", value, expr)


def _skip_balanced(expr, i, open_char, close_char):
    """Index after the bracket that closes the one at expr[i]."""
    depth = 0
    while i < len(expr):
        c = expr[i]
        if c in "\"'`":
            i = _end_of_string(expr, i)
            continue
        if c == open_char:
            depth += 1
        elif c == close_char:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError(f"unbalanced {open_char}{close_char} in: {expr}")


def _matchers(body, expr):
    labels, pos = {}, 0
    while pos < len(body):
        if not body[pos:].strip():
            break
        m = _MATCHER.match(body, pos)
        if m is None:
            raise ValueError(f"cannot parse label matchers {{{body}}} in: {expr}")
        labels[m.group(1)] = m.group(3)[1:-1]
        pos = m.end()
    return labels


def parse(expr):
    """Returns (refs, grouping labels) of a PromQL expression (Grafana variables allowed)."""
    expr = substitute(expr)
    refs, grouping = [], set()
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c.isspace() or c in "()+-*/%^=!<>,@":
            i += 1
        elif c in "\"'`":  # A string argument (label_replace, ...).
            i = _end_of_string(expr, i)
        elif c == "[":  # Range or subquery: durations only.
            i = _skip_balanced(expr, i, "[", "]")
        elif c == "{":  # A selector without a metric name: {__name__="..."}.
            end = _skip_balanced(expr, i, "{", "}")
            labels = _matchers(expr[i + 1:end - 1], expr)
            if "__name__" not in labels:
                raise ValueError(f"a selector without a metric name in: {expr}")
            refs.append(Ref(labels.pop("__name__"), set(labels)))
            i = end
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            m = _NUMBER.match(expr, i)
            i = m.end()
        else:
            m = _IDENT.match(expr, i)
            if m is None:
                raise ValueError(f"unexpected {c!r} at {i} in: {expr}")
            word, i = m.group(0), m.end()
            j = i
            while j < n and expr[j].isspace():
                j += 1
            nxt = expr[j] if j < n else ""
            if word in GROUPING:
                if nxt == "(":
                    end = _skip_balanced(expr, j, "(", ")")
                    grouping.update(x.strip() for x in expr[j + 1:end - 1].split(",") if x.strip())
                    i = end
            elif word.lower() in KEYWORDS or word in AGGREGATIONS:
                pass
            elif nxt == "(":
                pass  # A function or an aggregation.
            elif nxt == "{":
                end = _skip_balanced(expr, j, "{", "}")
                refs.append(Ref(word, set(_matchers(expr[j + 1:end - 1], expr))))
                i = end
            else:
                refs.append(Ref(word, set()))
    return refs, grouping


def _end_of_string(expr, i):
    quote, j = expr[i], i + 1
    while j < len(expr):
        if expr[j] == "\\" and quote != "`":
            j += 2
            continue
        if expr[j] == quote:
            return j + 1
        j += 1
    raise ValueError(f"unterminated string in: {expr}")


def label_values(query):
    """Grafana's label_values(SELECTOR, LABEL) or label_values(LABEL): (selector or None, label)."""
    m = re.fullmatch(r"\s*label_values\(\s*(?:(.*\S)\s*,\s*)?([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*",
                     query)
    if m is None:
        raise ValueError(f"unsupported template variable query: {query}")
    return m.group(1), m.group(2)


def expressions():
    """[(where, kind, expression)]: kind is "panel", "variable", "alert" or "adapter"."""
    out = []
    with open(DASHBOARD) as f:
        dashboard = json.load(f)

    def walk(panels):
        for panel in panels:
            for target in panel.get("targets", []):
                out.append((f'dashboard panel "{panel.get("title")}" {target.get("refId")}',
                            "panel", target["expr"]))
            walk(panel.get("panels", []))
    walk(dashboard.get("panels", []))
    for var in dashboard.get("templating", {}).get("list", []):
        if var.get("type") == "query":
            query = var["query"]["query"] if isinstance(var["query"], dict) else var["query"]
            out.append((f"dashboard variable ${var['name']}", "variable", query))
    with open(ALERTS) as f:
        for group in yaml.safe_load(f)["groups"]:
            for rule in group["rules"]:
                name = rule.get("alert") or rule.get("record")
                out.append((f"alerts.yml {name}", "alert", rule["expr"]))
    with open(ADAPTER) as f:
        for rule in yaml.safe_load(f)["rules"]["custom"]:
            out.append((f"prometheus-adapter rule {rule['name']['as']}", "adapter",
                        rule["seriesQuery"]))
            out.append((f"prometheus-adapter rule {rule['name']['as']} (metricsQuery)", "adapter",
                        adapter_query(rule)))
    return out


def adapter_query(rule, matchers='job="mtserve"', group_by="instance"):
    """The adapter's metricsQuery with its template filled in as the adapter would."""
    series = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", rule["seriesQuery"]).group(1)
    return (rule["metricsQuery"].replace("<<.Series>>", series)
            .replace("<<.LabelMatchers>>", matchers).replace("<<.GroupBy>>", group_by))


def refs_of(kind, expr):
    if kind == "variable":
        selector, label = label_values(expr)
        if selector is None:
            return [], {label}
        refs, grouping = parse(selector)
        return refs, grouping | {label}
    return parse(expr)


# --- checks ---------------------------------------------------------------------------------

def read_scrape(path):
    """{sample name: label names} and {family: type} of a Prometheus text exposition."""
    types, samples = {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(None, 3)
                types[name] = kind
            elif line and not line.startswith("#"):
                m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s", line)
                labels = samples.setdefault(m.group(1), set())
                if m.group(2):
                    labels.update(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="', m.group(2)))
    return samples, types


def valid_names(types):
    """Sample names the families allow: a histogram's are its _bucket, _sum and _count only."""
    names = {}
    for family, kind in types.items():
        if kind == "histogram":
            for suffix in ("_bucket", "_sum", "_count"):
                names[family + suffix] = family
        elif kind == "summary":
            for suffix in ("", "_sum", "_count"):
                names[family + suffix] = family
        else:
            names[family] = family
    return names


def check_scrape(path):
    samples, types = read_scrape(path)
    names = valid_names(types)
    problems, checked = [], set()
    for where, kind, expr in expressions():
        refs, grouping = refs_of(kind, expr)
        if kind != "variable" and not refs:
            problems.append(f"{where}: no metric found in: {expr}")
        available, missing = set(TARGET_LABELS), False
        for ref in refs:
            if ref.name in PROMETHEUS_OWN:
                labels = set()
            elif ref.name not in names:
                hint = ""
                if ref.name in types and types[ref.name] == "histogram":
                    hint = " (a histogram: query its _bucket, _sum or _count)"
                problems.append(f"{where}: metric {ref.name} is not exported by mtserve{hint}")
                missing = True
                continue
            else:
                labels = samples.get(ref.name, set())
                if ref.name not in samples:
                    problems.append(f"{where}: {ref.name} is a family of mtserve's but has no "
                                    "sample in the scrape (send traffic first)")
            checked.add(ref.name)
            available |= labels
            for label in sorted(ref.labels - labels - TARGET_LABELS):
                problems.append(f"{where}: {ref.name} has no label {label!r} "
                                f"(it has: {', '.join(sorted(labels)) or 'none'})")
        for label in sorted(grouping - available if not missing else ()):
            problems.append(f"{where}: label {label!r} (by/on/label_values) is on none of "
                            f"{', '.join(sorted({r.name for r in refs}))}")
    if problems:
        for p in problems:
            print(f"FAIL: {p}", file=sys.stderr)
        return 1
    print(f"ok: {len(checked)} metric names referenced, all exported with the labels used: "
          f"{', '.join(sorted(checked))}")
    return 0


def _get(url, params=None):
    if params:
        url += "?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:  # Prometheus answers 400/422 with a JSON error.
        return json.load(e)


def check_live(prometheus):
    problems, queries = [], 0
    for where, kind, expr in expressions():
        if kind == "alert":
            continue  # Checked through /api/v1/rules below.
        if kind == "variable":
            selector, label = label_values(expr)
            if selector is None:
                continue
            query, need_label = substitute(selector), label
        elif kind == "adapter" and "metricsQuery" not in where:
            query, need_label = expr, None  # seriesQuery: needs k8s labels; syntax only below.
        else:
            query, need_label = substitute(expr), None
        answer = _get(f"{prometheus}/api/v1/query", {"query": query})
        queries += 1
        if answer.get("status") != "success":
            problems.append(f"{where}: {answer.get('errorType')}: {answer.get('error')}\n"
                            f"    query: {query}")
            continue
        if kind == "adapter" and "metricsQuery" not in where:
            continue
        result = answer["data"]["result"]
        if not result:
            problems.append(f"{where}: no data\n    query: {query}")
        elif need_label and not all(need_label in r["metric"] for r in result):
            problems.append(f"{where}: results without label {need_label}\n    query: {query}")

    with open(ALERTS) as f:
        wanted = {rule.get("alert") or rule.get("record")
                  for group in yaml.safe_load(f)["groups"] for rule in group["rules"]}
    rules = {}
    for _ in range(100):  # Until every rule has been evaluated once.
        groups = _get(f"{prometheus}/api/v1/rules")["data"]["groups"]
        rules = {r["name"]: r for g in groups for r in g["rules"]}
        if set(rules) >= wanted and all(
                not rules[n].get("lastEvaluation", "").startswith("0001") for n in wanted):
            break
        time.sleep(0.2)
    for name in sorted(wanted):
        rule = rules.get(name)
        if rule is None:
            problems.append(f"alert {name}: not loaded by Prometheus")
        elif rule.get("health") != "ok" or rule.get("lastError"):
            problems.append(f"alert {name}: health {rule.get('health')!r}, "
                            f"error {rule.get('lastError')!r}")
    if problems:
        for p in problems:
            print(f"FAIL: {p}", file=sys.stderr)
        return 1
    print(f"ok: {queries} dashboard/adapter queries returned data from a live Prometheus; "
          f"{len(wanted)} alert rules loaded and evaluated without error")
    return 0


def self_test():
    cases = [
        ('sum by (code) (rate(mtserve_requests_total{job=~"$job", model=~"$model|none"}'
         '[$__rate_interval]))',
         ["mtserve_requests_total{job,model}"], {"code"}),
        ('histogram_quantile(0.99, sum(rate(a_seconds_bucket{code="OK"}[5m])) by (le, model)) > 2',
         ["a_seconds_bucket{code}"], {"le", "model"}),
        ('(sum(rate(x_total{code=~"A|B"}[1m])) or vector(0)) / on() group_left() sum(y)',
         ["x_total{code}", "y{}"], set()),
        ('absent(up{job="mtserve"} == 1) and time() - process_start_time_seconds offset 5m > 1e3',
         ["up{job}", "process_start_time_seconds{}"], set()),
        ('rate(a[5m:30s]) * on(instance) group_left(model) b_info{model!~"x,y}"} unless c',
         ["a{}", "b_info{model}", "c{}"], {"instance", "model"}),
        ('{__name__="q", le="+Inf"} + label_replace(r, "dst", "$1", "src", "(.*)")',
         ["q{le}", "r{}"], set()),
        ('sum(avg_over_time(mtserve_queue_depth{namespace!="",pod!=""}[2m])) by (pod)',
         ["mtserve_queue_depth{namespace,pod}"], {"pod"}),
    ]
    failures = 0
    for expr, want_refs, want_grouping in cases:
        refs, grouping = parse(expr)
        got = [repr(r) for r in refs]
        if got != want_refs or grouping != want_grouping:
            print(f"FAIL: parse({expr!r}) = {got}, {grouping}; want {want_refs}, "
                  f"{want_grouping}", file=sys.stderr)
            failures += 1
    for query, want in (
            ('label_values(m_info{job=~"$job"}, model)', ('m_info{job=~"$job"}', "model")),
            ("label_values(instance)", (None, "instance"))):
        if label_values(query) != want:
            print(f"FAIL: label_values({query!r}) = {label_values(query)}", file=sys.stderr)
            failures += 1
    # The scrape check on a made-up scrape: a histogram's bare name and an unknown label fail.
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("# TYPE h_seconds histogram\nh_seconds_bucket{model=\"m\",le=\"1\"} 1\n"
                "h_seconds_sum{model=\"m\"} 1\nh_seconds_count{model=\"m\"} 1\n")
    samples, types = read_scrape(f.name)
    os.unlink(f.name)
    names = valid_names(types)
    if ("h_seconds" in names or "h_seconds_bucket" not in names
            or samples["h_seconds_bucket"] != {"model", "le"}):
        print(f"FAIL: valid_names/read_scrape: {names}, {samples}", file=sys.stderr)
        failures += 1
    count = len(expressions())
    if count < 20:
        print(f"FAIL: only {count} expressions found in the deployment files", file=sys.stderr)
        failures += 1
    if failures:
        return 1
    print(f"ok: extractor self-test ({len(cases)} expressions); {count} expressions in the "
          "dashboard, alert rules and adapter rule")
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "self-test":
        return self_test()
    if len(argv) == 2 and argv[1] == "list":
        for where, kind, expr in expressions():
            refs, grouping = refs_of(kind, expr)
            print(f"{where}: {refs} by {sorted(grouping)}")
        return 0
    if len(argv) == 3 and argv[1] == "check-scrape":
        return check_scrape(argv[2])
    if len(argv) == 3 and argv[1] == "check-live":
        return check_live(argv[2].rstrip("/"))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
