#!/usr/bin/env python3
"""The OpenAPI description a real mtserve serves at /openapi.json against its real answers.

- The description is OpenAPI 3.0, every $ref in it resolves, and its schemas use only the JSON
  Schema keywords the validator here checks (so no constraint is silently skipped).
- Its schemas match the .proto as the front end maps it to JSON: one schema per message with
  the message's fields (no more, no fewer) and their types, `additionalProperties: false`, and
  in answers every field required (every field is printed, at its default too) except message
  fields, which protobuf leaves out when unset; none required in requests.
- The routes it lists are those the server lists in its 404 answer, and each of them is sent real
  requests (successes and errors: bad JSON, an unknown field, over a limit, unknown model, bad and
  passed deadlines, a body over the limit, a body that does not arrive, the queue full, while
  loading, while draining). Every answer's status must be documented for its route, its
  Content-Type must be the one documented, and its body (each line of an NDJSON one) must validate
  against the schema documented for that route and status; an undocumented field in an answer
  fails. Requests meant to be valid must validate against the request schema and those the server
  refuses for their shape must not. Unknown paths (404) and wrong methods (405) answer the error
  body the description gives.
- The validator itself refuses altered real answers (an extra field, a missing one, a wrong
  type, an unknown enum value, a stream line with both or neither of translation and error).

Usage: openapi_test.py BIN_DIR PROTO MODEL_DIR MULTI30K_TEXT
"""
import copy
import json
import os
import re
import sys
import threading
import time

# The shared helpers, imported without writing bytecode into the source tree.
sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../test_lib"), os.path.join(HERE, "../../../scripts/lib")]
from http_checks import Checks, call  # noqa: E402
from mtserve_process import MtserveProcess  # noqa: E402

# A small queue decoded a sentence at a time, so that one request can fill it (429 for the next).
FLAGS = ["--workers=1", "--http_timeout=2s", "--max_message_bytes=65536", "--max_text_bytes=4096",
         "--max_texts_per_request=8", "--max_queued_texts=16", "--max_batch_size=1",
         "--cache_bytes=0"]

# The keywords the validator checks, and those that only annotate.
CHECKED = {"$ref", "type", "properties", "required", "additionalProperties", "items", "enum",
           "minimum", "maximum", "allOf", "oneOf"}
ANNOTATIONS = {"description", "format", "example", "title"}


class Validator:
    """The subset of OpenAPI 3.0's JSON Schema that the description uses, strictly: a keyword
    it does not know is an error rather than ignored."""

    TYPES = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
    }

    def __init__(self, doc):
        self.doc = doc

    def resolve(self, ref):
        if not ref.startswith("#/"):
            raise ValueError(f"$ref {ref} is not local")
        node = self.doc
        for part in ref[2:].split("/"):
            if not isinstance(node, dict) or part not in node:
                raise ValueError(f"$ref {ref} does not resolve")
            node = node[part]
        return node

    def errors(self, schema, value, where="body"):
        """What is wrong with `value` against `schema`: empty if nothing."""
        out = []
        unknown = set(schema) - CHECKED - ANNOTATIONS
        if unknown:
            return [f"{where}: the schema uses {sorted(unknown)}, which are not checked here"]
        if "$ref" in schema:
            out += self.errors(self.resolve(schema["$ref"]), value, where)
        for sub in schema.get("allOf", []):
            out += self.errors(sub, value, where)
        if "oneOf" in schema:
            matching = sum(1 for sub in schema["oneOf"] if not self.errors(sub, value, where))
            if matching != 1:
                out.append(f"{where}: matches {matching} of the {len(schema['oneOf'])} oneOf "
                           f"schemas, not exactly one")
        kind = schema.get("type")
        if kind is not None:
            if kind not in self.TYPES:
                return out + [f"{where}: unknown type {kind}"]
            if not self.TYPES[kind](value):
                return out + [f"{where}: {json.dumps(value)[:80]} is not of type {kind}"]
        if "enum" in schema and not any(value == e and type(value) is type(e)
                                        for e in schema["enum"]):
            out.append(f"{where}: {json.dumps(value)[:80]} is not one of {schema['enum']}")
        if self.TYPES["number"](value):
            if "minimum" in schema and value < schema["minimum"]:
                out.append(f"{where}: {value} is below the minimum {schema['minimum']}")
            if "maximum" in schema and value > schema["maximum"]:
                out.append(f"{where}: {value} is above the maximum {schema['maximum']}")
        if isinstance(value, dict):
            properties = schema.get("properties", {})
            for name in schema.get("required", []):
                if name not in value:
                    out.append(f"{where}: lacks the required field {name}")
            extra = schema.get("additionalProperties", True)
            for name, field in value.items():
                if name in properties:
                    out += self.errors(properties[name], field, f"{where}.{name}")
                elif extra is False:
                    out.append(f"{where}: has the undocumented field {name}")
                elif isinstance(extra, dict):
                    out += self.errors(extra, field, f"{where}.{name}")
        if isinstance(value, list) and "items" in schema:
            for i, item in enumerate(value):
                out += self.errors(schema["items"], item, f"{where}[{i}]")
        return out


def walk(node, visit, where="#"):
    """Calls visit(node, where) on every dict in the document."""
    if isinstance(node, dict):
        visit(node, where)
        for key, value in node.items():
            walk(value, visit, f"{where}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            walk(value, visit, f"{where}/{i}")


class Api:
    """The description and the exchanges checked against it."""

    METHODS = ("get", "post", "put", "delete", "patch", "head", "options")

    def __init__(self, doc, checks):
        self.doc = doc
        self.checks = checks
        self.validator = Validator(doc)
        self.seen = {}  # (METHOD, path) -> statuses answered.

    def operations(self):
        return {(method.upper(), path) for path, item in self.doc["paths"].items()
                for method in item if method in self.METHODS}

    def deref(self, node):
        while "$ref" in node:
            node = self.validator.resolve(node["$ref"])
        return node

    def request_schema(self, method, path):
        operation = self.doc["paths"][path][method.lower()]
        content = self.deref(operation["requestBody"])["content"]
        (media_type, media), = content.items()
        return media_type, media["schema"]

    def body_errors(self, media_type, schema, body):
        """A body's errors against the schema of its media type (NDJSON: of each line)."""
        try:
            if media_type == "application/x-ndjson":
                values = [json.loads(line) for line in body.splitlines() if line.strip()]
                names = [f"line {i + 1}" for i in range(len(values))]
            else:
                values, names = [json.loads(body)], ["body"]
        except ValueError as e:
            return [f"not JSON: {e}"]
        return [e for value, name in zip(values, names)
                for e in self.validator.errors(schema, value, name)]

    def exchange(self, name, port, method, path, body=None, headers=None, status=None,
                 request_valid=None, timeout=120):
        """Sends a request to a documented operation and checks the answer against the
        description; returns (status, headers, body bytes)."""
        operation = self.doc["paths"].get(path, {}).get(method.lower())
        if not self.checks.expect(f"{name}: {method} {path} is documented", operation is not None):
            return call(port, method, path, body, headers, timeout)
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if request_valid is not None:
            media_type, schema = self.request_schema(method, path)
            errors = self.body_errors(media_type, schema, body)
            self.checks.expect(
                f"{name}: the request is {'valid' if request_valid else 'invalid'} by the "
                f"description", (not errors) == request_valid, f"{errors or body[:200]}")
        parameters = {self.deref(p)["name"].lower() for p in operation.get("parameters", [])
                      if self.deref(p)["in"] == "header"}
        # HTTP's own headers are not the API's parameters (OpenAPI leaves them out).
        for header in set(headers or {}) - {"Content-Length", "Content-Type"}:
            self.checks.expect(f"{name}: header {header} is documented",
                               header.lower() in parameters, f"documented: {parameters}")
        result = call(port, method, path, body, headers, timeout)
        got, answer_headers, answer = result
        self.seen.setdefault((method, path), set()).add(got)
        self.check_answer(name, operation["responses"].get(str(got)), result,
                          f"{method} {path}")
        if status is not None:
            self.checks.expect(f"{name}: {status}", got == status, f"got {got} {answer[:300]!r}")
        return result

    def check_answer(self, name, response, result, what):
        got, headers, answer = result
        if not self.checks.expect(f"{name}: status {got} is documented for {what}",
                                  response is not None, f"{answer[:300]!r}"):
            return
        content = self.deref(response).get("content", {})
        media_type = headers.get("Content-Type", "")
        if not self.checks.expect(f"{name}: Content-Type {media_type} is documented",
                                  media_type in content, f"documented: {list(content)}"):
            return
        errors = self.body_errors(media_type, content[media_type]["schema"], answer.decode())
        self.checks.expect(f"{name}: the answer validates against the description",
                           not errors, f"{errors[:5]} in {answer[:300]!r}")

    def error_answer(self, name, result, status, code):
        """An answer outside the documented operations (unknown path, wrong method): the
        description's error body."""
        got, headers, answer = result
        errors = self.body_errors("application/json", {"$ref": "#/components/schemas/HttpError"},
                                  answer.decode())
        self.checks.expect(f"{name}: {status} {code}, the description's HttpError",
                           got == status and headers.get("Content-Type") == "application/json"
                           and not errors and json.loads(answer)["code"] == code,
                           f"got {got} {errors} {answer[:300]!r}")


def check_document(checks, api):
    doc = api.doc
    checks.expect("the description is OpenAPI 3.0", str(doc.get("openapi", "")).startswith("3.0."),
                  f"{doc.get('openapi')}")
    bad_refs, unchecked = [], []

    def visit(node, where):
        if isinstance(node.get("$ref"), str):
            try:
                api.validator.resolve(node["$ref"])
            except ValueError as e:
                bad_refs.append(f"{where}: {e}")

    walk(doc, visit)
    checks.expect("every $ref resolves", not bad_refs, f"{bad_refs}")

    def visit_schema(schema, where):
        unknown = set(schema) - CHECKED - ANNOTATIONS
        if unknown:
            unchecked.append(f"{where}: {sorted(unknown)}")
        for name, sub in schema.get("properties", {}).items():
            visit_schema(sub, f"{where}/properties/{name}")
        for key in ("allOf", "oneOf"):
            for i, sub in enumerate(schema.get(key, [])):
                visit_schema(sub, f"{where}/{key}/{i}")
        for key in ("items", "additionalProperties"):
            if isinstance(schema.get(key), dict):
                visit_schema(schema[key], f"{where}/{key}")

    def find_schemas(node, where):
        if isinstance(node.get("schema"), dict):
            visit_schema(node["schema"], f"{where}/schema")

    walk(doc["paths"], find_schemas, "#/paths")
    walk(doc["components"], find_schemas, "#/components")
    for name, schema in doc["components"]["schemas"].items():
        visit_schema(schema, f"#/components/schemas/{name}")
    checks.expect("the schemas use only keywords the validator checks", not unchecked,
                  f"{unchecked}")


def parse_proto(text):
    """{message: [(label, type, name)]} and {enum: [value names]} of a .proto without nesting."""
    text = re.sub(r"//[^\n]*", "", text)
    messages, enums = {}, {}
    for kind, name, body in re.findall(r"\b(message|enum)\s+(\w+)\s*\{([^{}]*)\}", text):
        if kind == "message":
            messages[name] = [(label.strip(), type_, field) for label, type_, field in re.findall(
                r"(repeated\s+|optional\s+)?([\w.]+)\s+(\w+)\s*=\s*\d+\s*;", body)]
        else:
            enums[name] = re.findall(r"(\w+)\s*=\s*\d+\s*;", body)
    return messages, enums


# Proto scalar types and the JSON schema type the front end's mapping gives them (bytes: a JSON
# string of the text itself).
SCALARS = {"uint32": "integer", "int32": "integer", "uint64": "integer", "int64": "integer",
           "float": "number", "double": "number", "bool": "boolean", "string": "string",
           "bytes": "string"}


def schema_kind(api, schema):
    """A property schema's type, or the name of the component it refers to."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if len(schema.get("allOf", [])) == 1 and "$ref" in schema["allOf"][0]:
        return schema["allOf"][0]["$ref"].rsplit("/", 1)[1]
    return schema.get("type")


def reached_schemas(api, node):
    """The names of the component schemas `node` reaches through $refs."""
    names, todo = set(), [node]
    while todo:
        found = []
        walk(todo.pop(), lambda n, _: found.append(n["$ref"]) if isinstance(n.get("$ref"), str)
             and n["$ref"].startswith("#/components/schemas/") else None)
        for ref in found:
            name = ref.rsplit("/", 1)[1]
            if name not in names and name in api.doc["components"]["schemas"]:
                names.add(name)
                todo.append(api.doc["components"]["schemas"][name])
    return names


def check_proto(checks, api, proto_path):
    with open(proto_path, encoding="utf-8") as f:
        messages, enums = parse_proto(f.read())
    schemas = api.doc["components"]["schemas"]
    responses = [resp for item in api.doc["paths"].values() for op in item.values()
                 for resp in op["responses"].values()]
    requests = [op["requestBody"] for item in api.doc["paths"].values() for op in item.values()
                if "requestBody" in op]
    in_answers = set()
    for response in responses:
        in_answers |= reached_schemas(api, api.deref(response))
    in_requests = set()
    for request in requests:
        in_requests |= reached_schemas(api, api.deref(request))
    # The messages HTTP carries: ListModelsRequest is GET /v1/models's empty query.
    carried = in_answers | in_requests
    for name in messages:
        if name == "ListModelsRequest":
            continue
        checks.expect(f"proto message {name} has a schema used by a route",
                      name in schemas and name in carried)
    for name, values in enums.items():
        checks.expect(f"proto enum {name}: the schema's values are the enum's",
                      schemas.get(name, {}).get("enum") == values,
                      f"{schemas.get(name, {}).get('enum')} vs {values}")
    for name, fields in messages.items():
        schema = schemas.get(name)
        if schema is None or name == "ListModelsRequest":
            continue
        properties = schema.get("properties", {})
        problems = []
        if set(properties) != {f for _, _, f in fields}:
            problems.append(f"properties {sorted(properties)} vs fields "
                            f"{sorted(f for _, _, f in fields)}")
        if schema.get("additionalProperties") is not False:
            problems.append("additionalProperties is not false")
        for label, type_, field in fields:
            prop = properties.get(field)
            if prop is None:
                continue
            if label == "repeated":
                if prop.get("type") != "array":
                    problems.append(f"{field} is repeated but not an array")
                    continue
                prop = prop["items"]
            want = SCALARS.get(type_, type_)
            if schema_kind(api, prop) != want:
                problems.append(f"{field}: {schema_kind(api, prop)}, want {want}")
        # Answers print every field but message ones that are unset; requests need none.
        if name in in_answers:
            want_required = {f for label, type_, f in fields
                             if label == "repeated" or type_ in SCALARS or type_ in enums}
        else:
            want_required = set()
        if set(schema.get("required", [])) != want_required:
            problems.append(f"required {sorted(schema.get('required', []))}, want "
                            f"{sorted(want_required)}")
        checks.expect(f"schema {name} matches the proto message", not problems, f"{problems}")


def check_validator(checks, api, answer, stream_line, models, bad_request):
    """Altered real answers must be refused, or the checks above could never fail."""
    v = api.validator
    op = api.doc["paths"]
    translate = op["/v1/translate"]["post"]["responses"]
    ok_schema = api.deref(translate["200"])["content"]["application/json"]["schema"]
    bad_schema = api.deref(translate["400"])["content"]["application/json"]["schema"]
    line_schema = api.deref(op["/v1/translate:stream"]["post"]["responses"]["200"])[
        "content"]["application/x-ndjson"]["schema"]
    models_schema = api.deref(op["/v1/models"]["get"]["responses"]["200"])[
        "content"]["application/json"]["schema"]
    checks.expect("validator: accepts the real answers",
                  not v.errors(ok_schema, answer) and not v.errors(line_schema, stream_line)
                  and not v.errors(models_schema, models) and not v.errors(bad_schema, bad_request))

    def refuses(what, schema, value, needle):
        errors = v.errors(schema, value)
        checks.expect(f"validator: refuses {what}", any(needle in e for e in errors), f"{errors}")

    altered = copy.deepcopy(answer)
    altered["extra"] = 1
    refuses("an undocumented field in an answer", ok_schema, altered, "undocumented field extra")
    altered = copy.deepcopy(answer)
    altered["translations"][0]["hypotheses"][0]["debug"] = "x"
    refuses("an undocumented field deep in an answer", ok_schema, altered,
            "undocumented field debug")
    altered = copy.deepcopy(answer)
    del altered["translations"][0]["hypotheses"][0]["score"]
    refuses("a missing field", ok_schema, altered, "required field score")
    altered = copy.deepcopy(answer)
    altered["translations"][0]["source_tokens"] = str(altered["translations"][0]["source_tokens"])
    refuses("a number as a string", ok_schema, altered, "not of type integer")
    altered = copy.deepcopy(answer)
    altered["translations"][0]["sentences"][0]["begin"] = -1
    refuses("a negative offset", ok_schema, altered, "below the minimum")
    altered = copy.deepcopy(models)
    altered["models"][0]["is_default"] = 1
    refuses("a number for a boolean", models_schema, altered, "not of type boolean")
    refuses("an error code of another status", bad_schema,
            dict(bad_request, code="NOT_FOUND"), "is not one of")
    refuses("an unknown error code", bad_schema, dict(bad_request, code="OOPS"), "is not one of")
    both = dict(stream_line, error={"code": 5, "message": "x"})
    refuses("a stream line with translation and error", line_schema, both, "oneOf")
    neither = {k: val for k, val in stream_line.items() if k != "translation"}
    refuses("a stream line with neither translation nor error", line_schema, neither, "oneOf")


def run_loading_and_drain_checks(checks, api, bin_dir, model_dir, sentences):
    # 16 copies of the model: time to ask while they load.
    specs = ",".join(f"m{i}={model_dir}" for i in range(16))
    server = MtserveProcess(os.path.join(bin_dir, "mtserve"), f"--model={specs}", "--workers=1",
                            "--http_timeout=60s", "--shutdown_grace=120s", "--cache_bytes=0",
                            wait_serving=False)
    try:
        server.wait_ready("loading")
        port = server.http_port
        # While the models load: 503 from readyz, models and translate, stream lines with errors.
        ready = api.exchange("loading: /readyz", port, "GET", "/readyz")
        models = api.exchange("loading: /v1/models", port, "GET", "/v1/models")
        translate = api.exchange("loading: /v1/translate", port, "POST", "/v1/translate",
                                 {"texts": ["A dog runs."]}, request_valid=True)
        stream = api.exchange("loading: /v1/translate:stream", port, "POST",
                              "/v1/translate:stream", '{"id": "1", "text": "A dog runs."}\n',
                              request_valid=True)
        still_loading = "mtserve: serving" not in server.stderr()
        checks.expect("loading: the requests above were answered while the models loaded",
                      still_loading and ready[0] == 503 and models[0] == 503
                      and translate[0] == 503 and stream[0] == 200
                      and json.loads(stream[2])["error"]["code"] == 14,
                      f"still loading: {still_loading}; {ready[0]} {models[0]} {translate[0]} "
                      f"{stream[2][:200]!r}")
        api.exchange("loading: /openapi.json", port, "GET", "/openapi.json", status=200)
        server.wait_ready("serving", timeout=300)

        # Draining: a translation in flight, then SIGTERM.
        document = " ".join(sentences[:300])
        translating = server.terminate_during(
            lambda: call(port, "POST", "/v1/translate", {"texts": [document]}, timeout=300))
        api.exchange("draining: /readyz", port, "GET", "/readyz", status=503)
        api.exchange("draining: /healthz", port, "GET", "/healthz", status=200)
        api.exchange("draining: /v1/models", port, "GET", "/v1/models", status=503)
        api.exchange("draining: /v1/translate", port, "POST", "/v1/translate", {"texts": ["a"]},
                     status=503, request_valid=True)
        api.exchange("draining: /v1/translate:stream", port, "POST", "/v1/translate:stream",
                     '{"id": "1", "text": "a"}\n', status=503, request_valid=True)
        api.exchange("draining: /openapi.json", port, "GET", "/openapi.json", status=200)
        translating.join(300)
        answer = translating.result or (0, {}, b"")
        api.seen.setdefault(("POST", "/v1/translate"), set()).add(answer[0])
        api.check_answer("draining: the translation in flight",
                         api.doc["paths"]["/v1/translate"]["post"]["responses"].get(
                             str(answer[0])), answer, "POST /v1/translate")
        checks.expect("draining: the translation in flight is answered 200", answer[0] == 200,
                      f"{answer[0]} {answer[2][:200]!r}")
        checks.expect("draining: mtserve exits 0", server.process.wait(timeout=120) == 0,
                      server.stderr())
    finally:
        server.stop()


def run_serving_checks(checks, api, server, sentences):
    port = server.http_port
    lines = sentences[:2]
    ex = api.exchange
    answer = json.loads(ex("translate", port, "POST", "/v1/translate",
                           {"texts": lines + [""],
                            "options": {"beam_size": 2, "num_hypotheses": 2}},
                           status=200, request_valid=True)[2])
    ex("translate with every option", port, "POST", "/v1/translate",
       {"model": "", "texts": [lines[0]],
        "options": {"beam_size": 1, "num_hypotheses": 1, "length_penalty": 0.6,
                    "sampling_topk": 5, "sampling_temperature": 0.8, "seed": 7, "max_length": 64,
                    "min_length": 1, "return_scores": True, "split_sentences": False,
                    "return_alignment": True, "format": "TEXT_FORMAT_PLAIN"}},
       status=200, request_valid=True)
    ex("translate HTML with scores and alignment", port, "POST", "/v1/translate",
       {"texts": ["<p>A <b>dog</b> runs.</p>"],
        "options": {"format": "TEXT_FORMAT_HTML", "return_scores": True,
                    "return_alignment": True}}, status=200, request_valid=True)
    ex("translate with a deadline that does not pass", port, "POST", "/v1/translate",
       {"texts": lines[:1]}, headers={"X-Request-Timeout": "60s"}, status=200, request_valid=True)
    bad_request = json.loads(ex("translate: not JSON", port, "POST", "/v1/translate",
                                '{"texts": [', status=400)[2])
    ex("translate: an unknown field", port, "POST", "/v1/translate",
       {"texts": ["a"], "options": {"beam": 2}}, status=400, request_valid=False)
    ex("translate: a wrong type", port, "POST", "/v1/translate",
       {"texts": ["a"], "options": {"beam_size": "four"}}, status=400, request_valid=False)
    ex("translate: an unknown format", port, "POST", "/v1/translate",
       {"texts": ["a"], "options": {"format": "TEXT_FORMAT_PDF"}}, status=400, request_valid=False)
    ex("translate: over a limit", port, "POST", "/v1/translate",
       {"texts": ["a"], "options": {"beam_size": 20}}, status=400, request_valid=True)
    ex("translate: too many texts", port, "POST", "/v1/translate", {"texts": ["a"] * 9},
       status=400, request_valid=True)
    ex("translate: an unknown model", port, "POST", "/v1/translate",
       {"model": "no-such-model", "texts": ["a"]}, status=404, request_valid=True)
    ex("translate: a timeout that is not a duration", port, "POST", "/v1/translate",
       {"texts": ["a"]}, headers={"X-Request-Timeout": "soon"}, status=400)
    ex("translate: a deadline that passes", port, "POST", "/v1/translate", {"texts": lines},
       headers={"X-Request-Timeout": "0s"}, status=504, request_valid=True)
    ex("translate: a body over --max_message_bytes", port, "POST", "/v1/translate",
       {"texts": ["a " * 40000]}, status=413)
    # A body that stops arriving: 408 after --http_timeout (Content-Length promises more).
    ex("translate: a body that does not arrive", port, "POST", "/v1/translate", '{"texts": ',
       headers={"Content-Length": "100"}, status=408)

    # Queue full: two requests of 8 texts of 16 sentences each fill the queue (16 sentences) and
    # leave 16 texts waiting for room (--max_queued_texts counts both); one more text gets 429.
    # They go after 5 s. Tried a few times in case they left the queue in between.
    texts = [" ".join(sentences[100 + i:116 + i]) for i in range(8)]
    for _ in range(5):
        threads = [threading.Thread(target=call, args=(port, "POST", "/v1/translate",
                                                       {"texts": texts},
                                                       {"X-Request-Timeout": "5s"}), daemon=True)
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(t.is_alive() for t in threads):
            # Both requests' sentences in the scheduler: more than one request's 128.
            depth = re.search(r"^mtserve_queue_depth\{[^}]*\} (\d+)", server.metrics(),
                              re.MULTILINE)
            if depth and int(depth.group(1)) > 140:
                break
            time.sleep(0.005)
        full = ex("translate: the queue full", port, "POST", "/v1/translate",
                  {"texts": [sentences[0]]}, request_valid=True)
        for thread in threads:
            thread.join(120)
        if full[0] == 429:
            break
    checks.expect("translate: the queue full: 429", full[0] == 429,
                  f"got {full[0]} {full[2][:200]!r}")

    stream = "\n".join(json.dumps(line) for line in [
        {"id": "0", "text": lines[0], "options": {"beam_size": 2, "return_scores": True}},
        {"id": "1", "text": lines[1], "model": ""},
        {"id": "bad-model", "text": "a", "model": "no-such-model"},
        {"id": "over-limit", "text": "a", "options": {"beam_size": 20}},
    ]) + "\n\n"
    result = ex("stream", port, "POST", "/v1/translate:stream", stream, status=200,
                request_valid=True)
    stream_lines = [json.loads(line) for line in result[2].decode().splitlines()]
    checks.expect("stream: a line per text, errors among them",
                  sorted(line.get("id") for line in stream_lines)
                  == ["0", "1", "bad-model", "over-limit"]
                  and sum("error" in line for line in stream_lines) == 2, f"{result[2][:400]!r}")
    ex("stream: every line past its deadline", port, "POST", "/v1/translate:stream", stream,
       headers={"X-Request-Timeout": "0s"}, status=200, request_valid=True)
    ex("stream: a line that is not JSON", port, "POST", "/v1/translate:stream",
       '{"id": "a", "text": "x"}\n{oops\n', status=400)
    ex("stream: an unknown field", port, "POST", "/v1/translate:stream",
       '{"id": "a", "txt": "x"}\n', status=400, request_valid=False)
    ex("stream: a timeout that is not a duration", port, "POST", "/v1/translate:stream",
       '{"id": "a", "text": "x"}\n', headers={"X-Request-Timeout": "soon"}, status=400)
    ex("stream: a body over --max_message_bytes", port, "POST", "/v1/translate:stream",
       json.dumps({"id": "a", "text": "a " * 40000}) + "\n", status=413)
    ex("stream: a body that does not arrive", port, "POST", "/v1/translate:stream", '{"id": ',
       headers={"Content-Length": "100"}, status=408)

    models = json.loads(ex("models", port, "GET", "/v1/models", status=200)[2])
    detected = json.loads(ex("detect", port, "POST", "/v1/detect",
                             {"texts": ["A man rides a bike.", "42"], "all_languages": True,
                              "max_results": 2}, status=200, request_valid=True)[2])
    checks.expect("detect: the English text is English, the number has no language",
                  [[x["language"] for x in d["languages"]][:1] for d in detected["detections"]]
                  == [["en"], []], f"{detected}")
    ex("detect: too many texts", port, "POST", "/v1/detect", {"texts": ["a"] * 9}, status=400,
       request_valid=True)
    ex("detect: an unknown field", port, "POST", "/v1/detect", {"texts": ["a"], "language": "x"},
       status=400, request_valid=False)
    ex("healthz", port, "GET", "/healthz", status=200)
    ex("readyz", port, "GET", "/readyz", status=200)
    served = ex("openapi.json", port, "GET", "/openapi.json", status=200)
    checks.expect("/openapi.json is the description fetched first",
                  json.loads(served[2]) == api.doc)

    # Outside the documented operations: the error body the description gives.
    not_found = call(port, "GET", "/v2/nothing")
    api.error_answer("an unknown path", not_found, 404, "NOT_FOUND")
    listed = set(re.findall(r"\b(GET|POST|PUT|DELETE|PATCH) (/[^,\s]*)",
                            json.loads(not_found[2]).get("message", "")))
    checks.expect("the routes documented are the routes the server lists in its 404",
                  listed == api.operations(),
                  f"server: {sorted(listed)}; description: {sorted(api.operations())}")
    for method, path in sorted(api.operations()):
        wrong = "POST" if method == "GET" else "GET"
        refused = call(port, wrong, path)
        api.error_answer(f"{wrong} {path}", refused, 405, "UNIMPLEMENTED")
        allowed = {m.strip() for m in refused[1].get("Allow", "").split(",")}
        documented = {m for m, p in api.operations() if p == path}
        checks.expect(f"{wrong} {path}: 405's Allow lists the documented methods",
                      documented <= allowed and wrong not in allowed,
                      f"Allow: {refused[1].get('Allow')!r}, documented {sorted(documented)}")

    check_validator(checks, api, answer, next(line for line in stream_lines if "translation" in
                                              line), models, bad_request)


def main():
    bin_dir, proto, model_dir, source = sys.argv[1:5]
    with open(source, encoding="utf-8") as f:
        sentences = [line.strip() for line in f if line.strip()]
    checks = Checks()
    server = MtserveProcess(os.path.join(bin_dir, "mtserve"), *FLAGS)
    try:
        status, headers, body = call(server.http_port, "GET", "/openapi.json")
        if not checks.expect("GET /openapi.json: 200 application/json",
                             status == 200 and headers.get("Content-Type") == "application/json",
                             f"{status} {headers.get('Content-Type')} {body[:200]!r}"):
            sys.exit(1)
        api = Api(json.loads(body), checks)
        check_document(checks, api)
        check_proto(checks, api, proto)
        run_serving_checks(checks, api, server, sentences)
    finally:
        server.stop()
    run_loading_and_drain_checks(checks, api, bin_dir, model_dir, sentences)

    # Every documented operation answered, with a success among its answers.
    for method, path in sorted(api.operations()):
        seen = api.seen.get((method, path), set())
        checks.expect(f"{method} {path} answered, a 2xx among its answers",
                      any(200 <= s < 300 for s in seen), f"statuses seen: {sorted(seen)}")
        documented = {int(s) for s in api.doc["paths"][path][method.lower()]["responses"]}
        if documented - seen:
            print(f"note {method} {path}: documented statuses not produced here: "
                  f"{sorted(documented - seen)}")
    print(f"{checks.passed} passed, {checks.failed} failed")
    sys.exit(1 if checks.failed else 0)


if __name__ == "__main__":
    main()
