#!/usr/bin/env python3
"""The OpenAPI description a real mtserve serves at /openapi.json against its real answers.

- The description is OpenAPI 3.0, every $ref in it resolves, and its schemas use only the JSON
  Schema keywords the validator here checks (so no constraint is silently skipped).
- Its schemas match the .proto as the front end maps it to JSON: one schema per message with
  the message's fields (no more, no fewer) and their types, `additionalProperties: false`, and
  in answers every field required (every field is printed, at its default too) except message
  fields, which protobuf leaves out when unset; none required in requests.
- The routes it lists are those the server lists in its 404 answer, each of them answers a
  success (2xx) to a request the test holds for it, and each is sent real
  requests (successes and errors: bad JSON, an unknown field, over a limit, unknown model, bad and
  passed deadlines, a body over the limit, a body that does not arrive, the queue full, while
  loading, while draining); the operators' calls (/v1/models/{name}:load and :unload) on a
  server with API keys, an admin key and a plain one, and on one without keys. Every answer's
  status must be documented for its route, its
  Content-Type must be the one documented, and its body (each line of an NDJSON one) must validate
  against the schema documented for that route and status; an undocumented field in an answer
  fails. Requests meant to be valid must validate against the request schema and those the server
  refuses for their shape must not. Unknown paths (404) and wrong methods (405) answer the error
  body the description gives.
- The validator itself refuses altered real answers (an extra field, a missing one, a wrong
  type, an unknown enum value, a stream line with both or neither of translation and error).

Usage: openapi_test.py BIN_DIR PROTO MODEL_DIR MULTI30K_TEXT [-- UNITTEST ARGUMENTS]
"""
import copy
import hashlib
import json
import os
import re
import sys
import time

from urllib3.filepost import encode_multipart_formdata

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402

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
    """The description and what an exchange with the server breaks of it."""

    METHODS = ("get", "post", "put", "delete", "patch", "head", "options")

    def __init__(self, doc):
        self.doc = doc
        self.validator = Validator(doc)

    def operations(self):
        return {(method.upper(), path) for path, item in self.doc["paths"].items()
                for method in item if method in self.METHODS}

    def template(self, path):
        """The documented path `path` is an instance of (a {name} or {id} segment standing for
        any segment), or `path` itself."""
        for documented in self.doc["paths"]:
            pattern = "^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(documented)) + "$"
            if re.match(pattern, path):
                return documented
        return path

    def deref(self, node):
        while "$ref" in node:
            node = self.validator.resolve(node["$ref"])
        return node

    def request_schema(self, method, path):
        operation = self.doc["paths"][path][method.lower()]
        content = self.deref(operation["requestBody"])["content"]
        (media_type, media), = content.items()
        return media_type, media["schema"]

    def response_schema(self, method, path, status, media_type):
        response = self.doc["paths"][path][method.lower()]["responses"][str(status)]
        return self.deref(response)["content"][media_type]["schema"]

    def body_errors(self, media_type, schema, body):
        """A body's errors against the schema of its media type (NDJSON: of each line; a file's
        bytes, of another type: their schema is a binary string)."""
        if media_type not in ("application/json", "application/x-ndjson"):
            return [] if schema == {"type": "string", "format": "binary"} else [
                f"{media_type} is not JSON, and its schema is not a binary string"]
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

    def exchange(self, port, method, path, body=None, headers=None, status=None,
                 request_valid=None, timeout=120):
        """Sends a request to a documented operation; (result from call, the problems: what of
        the description the request or its answer breaks, and a status other than `status`)."""
        problems = []
        documented = self.template(path)
        operation = self.doc["paths"].get(documented, {}).get(method.lower())
        if operation is None:
            return call(port, method, path, body, headers, timeout), [
                f"{method} {path} is not documented"]
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
        if request_valid is not None:
            media_type, schema = self.request_schema(method, documented)
            errors = self.body_errors(media_type, schema, body)
            if (not errors) != request_valid:
                problems.append(f"the request is {'invalid' if request_valid else 'valid'} by "
                                f"the description: {errors or body[:200]}")
        parameters = {self.deref(p)["name"].lower() for p in operation.get("parameters", [])
                      if self.deref(p)["in"] == "header"}
        # A key (on a server with API keys) goes in a header of a security scheme the operation
        # takes.
        schemes = self.doc.get("components", {}).get("securitySchemes", {})
        for requirement in operation.get("security", self.doc.get("security", [])):
            for name in requirement:
                scheme = schemes[name]
                parameters.add("authorization" if scheme["type"] == "http"
                               else scheme["name"].lower())
        # HTTP's own headers are not the API's parameters (OpenAPI leaves them out).
        for header in set(headers or {}) - {"Content-Length", "Content-Type"}:
            if header.lower() not in parameters:
                problems.append(f"header {header} is not documented (documented: {parameters})")
        result = call(port, method, path, body, headers, timeout)
        SEEN.setdefault((method, documented), set()).add(result[0])
        problems += self.answer_problems(operation["responses"].get(str(result[0])), result,
                                         f"{method} {path}")
        if status is not None and result[0] != status:
            problems.append(f"got {result[0]}, want {status}: {result[2][:300]!r}")
        return result, problems

    def answer_problems(self, response, result, what):
        """What of `response` (the description's for its status, None if it has none) an
        answer breaks."""
        got, headers, answer = result
        if response is None:
            return [f"status {got} is not documented for {what}: {answer[:300]!r}"]
        content = self.deref(response).get("content", {})
        media_type = headers.get("Content-Type", "")
        if media_type not in content:
            return [f"Content-Type {media_type} is not documented (documented: {list(content)})"]
        errors = self.body_errors(media_type, content[media_type]["schema"], answer.decode())
        return [f"the answer does not validate: {errors[:5]} in {answer[:300]!r}"] if errors \
            else []

    def error_answer_problems(self, result, status, code):
        """An answer outside the documented operations (unknown path, wrong method): the
        description's error body with this status and code."""
        got, headers, answer = result
        errors = self.body_errors("application/json", {"$ref": "#/components/schemas/HttpError"},
                                  answer.decode())
        if (got == status and headers.get("Content-Type") == "application/json" and not errors
                and json.loads(answer)["code"] == code):
            return []
        return [f"got {got} {errors} {answer[:300]!r}, want {status} {code}, the description's "
                f"HttpError"]


# The statuses each operation answered in the suite: (METHOD, path) -> statuses.
SEEN = {}
SENTENCES = []


def setUpModule():
    SENTENCES.extend(e2e_suite.nonblank_lines(e2e_suite.ARGS.multi30k_text))


def tearDownModule():
    for (method, path), seen in sorted(SEEN.items()):
        item = DESCRIPTION.get("paths", {}).get(path, {}).get(method.lower(), {})
        documented = {int(s) for s in item.get("responses", {})}
        if documented - seen:
            print(f"note {method} {path}: documented statuses not produced here: "
                  f"{sorted(documented - seen)}")


# The description as the first server served it (for tearDownModule's note).
DESCRIPTION = {}


def fetch_description(port):
    """The Api of the description the server at `port` serves; raises AssertionError unless it
    is served 200 as JSON."""
    status, headers, body = call(port, "GET", "/openapi.json")
    if status != 200 or headers.get("Content-Type") != "application/json":
        raise AssertionError(f"GET /openapi.json: {status} {headers.get('Content-Type')} "
                             f"{body[:200]!r}, want 200 application/json")
    doc = json.loads(body)
    DESCRIPTION.setdefault("paths", doc.get("paths", {}))
    return Api(doc)


class OpenApiTestCase(e2e_suite.MtserveTestCase):
    """`api`: the description the class's server serves (or the test's, set by the test)."""

    server_flags = FLAGS
    api = None

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if cls.server is not None:
            cls.port = cls.server.http_port
            cls.api = fetch_description(cls.port)

    def exchange(self, name, port, method, path, body=None, headers=None, status=None,
                 request_valid=None, timeout=120):
        """Api.exchange, its problems a failure of the subtest `name`; returns the result."""
        result, problems = self.api.exchange(port, method, path, body, headers, status,
                                             request_valid, timeout)
        with self.subTest(name):
            if problems:
                self.fail(f"{name}: {method} {path}: " + "; ".join(problems))
        return result

    def assertDescribedError(self, result, status, code):
        problems = self.api.error_answer_problems(result, status, code)
        if problems:
            self.fail("; ".join(problems))


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
# string of the text itself). 64-bit integers are written as decimal strings in answers and read
# as numbers or strings in requests.
SCALARS = {"uint32": "integer", "int32": "integer", "uint64": "integer", "int64": "integer",
           "float": "number", "double": "number", "bool": "boolean", "string": "string",
           "bytes": "string"}
ANSWER_SCALARS = {**SCALARS, "uint64": "string", "int64": "string"}
# Messages HTTP carries no JSON of: ListModelsRequest is GET /v1/models's empty query; gRPC's
# TranslateFile stream is HTTP's multipart form (POST /v1/translate_file) and download; the
# glossary calls' requests are GET /v1/glossaries's empty query and /v1/glossaries/{id}'s path.
NOT_OVER_HTTP = {"ListModelsRequest", "FileHeader", "TranslateFileRequest",
                 "TranslateFileResponse", "ListGlossariesRequest", "GetGlossaryRequest",
                 "DeleteGlossaryRequest"}


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


class DescriptionTest(OpenApiTestCase):
    def test_the_description_is_openapi_3_0(self):
        self.assertTrue(str(self.api.doc.get("openapi", "")).startswith("3.0."),
                        f"openapi: {self.api.doc.get('openapi')!r}")

    def test_every_ref_resolves(self):
        bad_refs = []

        def visit(node, where):
            if isinstance(node.get("$ref"), str):
                try:
                    self.api.validator.resolve(node["$ref"])
                except ValueError as e:
                    bad_refs.append(f"{where}: {e}")

        walk(self.api.doc, visit)
        self.assertEqual(bad_refs, [])

    def test_the_schemas_use_only_keywords_the_validator_checks(self):
        doc, unchecked = self.api.doc, []

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
        self.assertEqual(unchecked, [], "schema keywords the validator would skip")


class ProtoTest(OpenApiTestCase):
    """The schemas against the .proto's messages and enums."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(e2e_suite.ARGS.proto, encoding="utf-8") as f:
            cls.messages, cls.enums = parse_proto(f.read())
        api = cls.api
        responses = [resp for item in api.doc["paths"].values() for op in item.values()
                     for resp in op["responses"].values()]
        requests = [op["requestBody"] for item in api.doc["paths"].values()
                    for op in item.values() if "requestBody" in op]
        cls.in_answers, cls.in_requests = set(), set()
        for response in responses:
            cls.in_answers |= reached_schemas(api, api.deref(response))
        for request in requests:
            cls.in_requests |= reached_schemas(api, api.deref(request))

    def test_every_message_has_a_schema_used_by_a_route(self):
        schemas = self.api.doc["components"]["schemas"]
        # The messages HTTP carries: ListModelsRequest is GET /v1/models's empty query.
        carried = self.in_answers | self.in_requests
        for name in self.messages:
            if name in NOT_OVER_HTTP:
                continue
            with self.subTest(name):
                self.assertIn(name, schemas, "no schema")
                self.assertIn(name, carried, "the schema is used by no route")

    def test_every_enums_schema_has_the_enums_values(self):
        schemas = self.api.doc["components"]["schemas"]
        for name, values in self.enums.items():
            with self.subTest(name):
                self.assertEqual(schemas.get(name, {}).get("enum"), values)

    def test_every_messages_schema_matches_the_message(self):
        schemas = self.api.doc["components"]["schemas"]
        for name, fields in self.messages.items():
            schema = schemas.get(name)
            if schema is None or name in NOT_OVER_HTTP:
                continue  # A missing schema fails test_every_message_has_a_schema_used_by_a_route.
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
                want = (ANSWER_SCALARS if name in self.in_answers else SCALARS).get(type_, type_)
                if schema_kind(self.api, prop) != want:
                    problems.append(f"{field}: {schema_kind(self.api, prop)}, want {want}")
            # Answers print every field but message ones that are unset; requests need none.
            if name in self.in_answers:
                want_required = {f for label, type_, f in fields
                                 if label == "repeated" or type_ in SCALARS
                                 or type_ in self.enums}
            else:
                want_required = set()
            if set(schema.get("required", [])) != want_required:
                problems.append(f"required {sorted(schema.get('required', []))}, want "
                                f"{sorted(want_required)}")
            with self.subTest(name):
                self.assertEqual(problems, [], f"schema {name} against the proto message")


class ServingTest(OpenApiTestCase):
    """Real requests to a serving server, each answer checked against the description."""

    # One request per documented operation that the server must answer with a success.
    SUCCESSES = {
        ("POST", "/v1/translate"): {"texts": ["A dog runs."]},
        ("POST", "/v1/translate:stream"): '{"id": "1", "text": "A dog runs."}\n',
        ("GET", "/v1/models"): None,
        ("POST", "/v1/detect"): {"texts": ["A dog runs."]},
        ("GET", "/healthz"): None,
        ("GET", "/readyz"): None,
        ("GET", "/openapi.json"): None,
        ("POST", "/v1/glossaries"): {"name": "g", "source_language": "en", "target_language": "de",
                                     "entries": [{"source": "dog", "targets": ["Hund"]}]},
        ("GET", "/v1/glossaries"): None,
    }

    def test_every_documented_operation_answers_a_success(self):
        for method, path in sorted(self.api.operations()):
            with self.subTest(f"{method} {path}"):
                if (method, path) in AdminTest.SUCCESSES:
                    continue  # Operators' calls: on AdminTest's server, which has API keys.
                if path.startswith(("/v1/translate_file", "/v1/jobs/")):
                    continue  # A form and a job's id: test_file_routes_are_documented.
                if path == "/v1/glossaries/{id}":
                    continue  # A glossary's id: glossaries_test.py.
                if (method, path) not in self.SUCCESSES:
                    self.fail(f"{method} {path} is documented, but SUCCESSES holds no request "
                              f"for it")
                body = self.SUCCESSES[(method, path)]
                result = self.exchange(f"{method} {path}", self.port, method, path, body,
                                       request_valid=True if body is not None else None)
                self.assertTrue(200 <= result[0] < 300, f"got {result[0]} {result[2][:300]!r}")

    def translate_answer(self):
        """A real /v1/translate answer with several hypotheses, an empty text among the texts."""
        return json.loads(self.exchange(
            "translate", self.port, "POST", "/v1/translate",
            {"texts": SENTENCES[:2] + [""], "options": {"beam_size": 2, "num_hypotheses": 2}},
            status=200, request_valid=True)[2])

    def test_translate_answers_are_documented(self):
        self.translate_answer()
        ex, port, lines = self.exchange, self.port, SENTENCES[:2]
        ex("translate with every option", port, "POST", "/v1/translate",
           {"model": "", "texts": [lines[0]],
            "options": {"beam_size": 1, "num_hypotheses": 1, "length_penalty": 0.6,
                        "sampling_topk": 5, "sampling_temperature": 0.8, "seed": 7,
                        "max_length": 64, "min_length": 1, "return_scores": True,
                        "split_sentences": False, "return_alignment": True,
                        "format": "TEXT_FORMAT_PLAIN"}},
           status=200, request_valid=True)
        ex("translate HTML with scores and alignment", port, "POST", "/v1/translate",
           {"texts": ["<p>A <b>dog</b> runs.</p>"],
            "options": {"format": "TEXT_FORMAT_HTML", "return_scores": True,
                        "return_alignment": True}}, status=200, request_valid=True)
        ex("translate routed by language, with a text no model reads", port, "POST",
           "/v1/translate",
           {"texts": [lines[0], "Muž v oranžovém klobouku na něco zírá."],
            "source_language": "auto", "target_language": "de"}, status=200, request_valid=True)
        ex("stream routed by language", port, "POST", "/v1/translate:stream",
           '{"id": "1", "text": "A dog runs.", "target_language": "de"}\n', status=200,
           request_valid=True)
        ex("translate with a deadline that does not pass", port, "POST", "/v1/translate",
           {"texts": lines[:1]}, headers={"X-Request-Timeout": "60s"}, status=200,
           request_valid=True)

    def test_translate_refusals_are_documented(self):
        ex, port, lines = self.exchange, self.port, SENTENCES[:2]
        ex("translate: not JSON", port, "POST", "/v1/translate", '{"texts": [', status=400)
        ex("translate: an unknown field", port, "POST", "/v1/translate",
           {"texts": ["a"], "options": {"beam": 2}}, status=400, request_valid=False)
        ex("translate: a wrong type", port, "POST", "/v1/translate",
           {"texts": ["a"], "options": {"beam_size": "four"}}, status=400, request_valid=False)
        ex("translate: an unknown format", port, "POST", "/v1/translate",
           {"texts": ["a"], "options": {"format": "TEXT_FORMAT_PDF"}}, status=400,
           request_valid=False)
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
        ex("translate: a body that does not arrive", port, "POST", "/v1/translate",
           '{"texts": ', headers={"Content-Length": "100"}, status=408)

    def test_translate_with_the_queue_full_is_429(self):
        full = e2e_suite.answer_while_queue_full(
            self.server, SENTENCES,
            lambda: self.exchange("translate: the queue full", self.port, "POST",
                                  "/v1/translate", {"texts": [SENTENCES[0]]},
                                  request_valid=True))
        self.assertEqual(full[0], 429, f"the queue full: {full[2][:200]!r}")

    STREAM = "\n".join(json.dumps(line) for line in [
        {"id": "0", "text": "A dog runs.", "options": {"beam_size": 2, "return_scores": True}},
        {"id": "1", "text": "A man is riding a bike.", "model": ""},
        {"id": "bad-model", "text": "a", "model": "no-such-model"},
        {"id": "over-limit", "text": "a", "options": {"beam_size": 20}},
    ]) + "\n\n"

    def stream_lines(self):
        result = self.exchange("stream", self.port, "POST", "/v1/translate:stream", self.STREAM,
                               status=200, request_valid=True)
        return [json.loads(line) for line in result[2].decode().splitlines()]

    def test_stream_answers_a_documented_line_per_text_errors_among_them(self):
        lines = self.stream_lines()
        self.assertEqual(sorted(line.get("id") for line in lines),
                         ["0", "1", "bad-model", "over-limit"])
        self.assertEqual(sum("error" in line for line in lines), 2, f"{lines}")

    def test_stream_refusals_are_documented(self):
        ex, port = self.exchange, self.port
        ex("stream: every line past its deadline", port, "POST", "/v1/translate:stream",
           self.STREAM, headers={"X-Request-Timeout": "0s"}, status=200, request_valid=True)
        ex("stream: a line that is not JSON", port, "POST", "/v1/translate:stream",
           '{"id": "a", "text": "x"}\n{oops\n', status=400)
        ex("stream: an unknown field", port, "POST", "/v1/translate:stream",
           '{"id": "a", "txt": "x"}\n', status=400, request_valid=False)
        ex("stream: a timeout that is not a duration", port, "POST", "/v1/translate:stream",
           '{"id": "a", "text": "x"}\n', headers={"X-Request-Timeout": "soon"}, status=400)
        ex("stream: a body over --max_message_bytes", port, "POST", "/v1/translate:stream",
           json.dumps({"id": "a", "text": "a " * 40000}) + "\n", status=413)
        ex("stream: a body that does not arrive", port, "POST", "/v1/translate:stream",
           '{"id": ', headers={"Content-Length": "100"}, status=408)

    def test_models_health_and_readiness_are_documented(self):
        self.exchange("models", self.port, "GET", "/v1/models", status=200)
        self.exchange("healthz", self.port, "GET", "/healthz", status=200)
        self.exchange("readyz", self.port, "GET", "/readyz", status=200)

    def test_file_routes_are_documented(self):
        ex, port = self.exchange, self.port
        body, content_type = encode_multipart_formdata(
            {"file": ("dogs.md", b"# Dogs\n\nA dog runs on the beach.\n", "text/markdown"),
             "format": "markdown", "options": '{"beam_size": 1}'})
        form = {"Content-Type": content_type}
        submitted = ex("submit", port, "POST", "/v1/translate_file", body, form, status=202)
        job = json.loads(submitted[2])
        self.assertEqual(submitted[1].get("Location"), f"/v1/jobs/{job['id']}")
        # Polled until it ends (bounded, so that a broken server fails rather than hangs).
        for _ in range(6000):
            job = json.loads(ex("poll", port, "GET", f"/v1/jobs/{job['id']}", status=200)[2])
            if job["state"] not in ("FILE_JOB_STATE_QUEUED", "FILE_JOB_STATE_RUNNING"):
                break
            time.sleep(0.05)
        self.assertEqual(job["state"], "FILE_JOB_STATE_DONE", job)
        ex("result", port, "GET", job["result_url"], status=200)
        ex("delete", port, "DELETE", f"/v1/jobs/{job['id']}", status=200)
        for method, path in [("GET", f"/v1/jobs/{job['id']}"), ("DELETE", f"/v1/jobs/{job['id']}"),
                             ("GET", f"/v1/jobs/{job['id']}/result")]:
            ex(f"{method} {path} deleted", port, method, path, status=404)
        no_file, no_file_type = encode_multipart_formdata({"format": "markdown"})
        ex("no file", port, "POST", "/v1/translate_file", no_file,
           {"Content-Type": no_file_type}, status=400)
        ex("not a form", port, "POST", "/v1/translate_file", {"file": "x"}, status=400)
        big, big_type = encode_multipart_formdata({"file": ("big.txt", b"a" * (11 << 20))})
        ex("past the body's limit", port, "POST", "/v1/translate_file", big,
           {"Content-Type": big_type}, status=413)

    def test_detect_answers_are_documented(self):
        ex, port = self.exchange, self.port
        detected = json.loads(ex("detect", port, "POST", "/v1/detect",
                                 {"texts": ["A man rides a bike.", "42"], "all_languages": True,
                                  "max_results": 2}, status=200, request_valid=True)[2])
        self.assertEqual([[x["language"] for x in d["languages"]][:1]
                          for d in detected["detections"]], [["en"], []],
                         f"the English text is English, the number has no language: {detected}")
        ex("detect: too many texts", port, "POST", "/v1/detect", {"texts": ["a"] * 9},
           status=400, request_valid=True)
        ex("detect: an unknown field", port, "POST", "/v1/detect",
           {"texts": ["a"], "language": "x"}, status=400, request_valid=False)

    def test_without_api_keys_the_operators_calls_do_not_exist(self):
        for method, path in sorted(AdminTest.SUCCESSES):
            # Whatever key is sent: this server has none.
            self.exchange(f"{method} {path} without API keys", self.port, method,
                          path.replace("{name}", "multi30k-en-de"),
                          headers={"Authorization": f"Bearer {ADMIN_KEY}"}, status=501)

    def test_openapi_json_is_the_description_fetched_first(self):
        served = self.exchange("openapi.json", self.port, "GET", "/openapi.json", status=200)
        self.assertEqual(json.loads(served[2]), self.api.doc)

    def test_an_unknown_path_answers_the_descriptions_error_listing_the_documented_routes(self):
        not_found = call(self.port, "GET", "/v9/nothing")
        self.assertDescribedError(not_found, 404, "NOT_FOUND")
        listed = set(re.findall(r"\b(GET|POST|PUT|DELETE|PATCH) (/[^,\s]*)",
                                json.loads(not_found[2]).get("message", "")))
        self.assertEqual(listed, self.api.operations(),
                         "the routes the server lists in its 404, the description's")

    def test_a_wrong_method_gets_405_with_allow_listing_the_documented_methods(self):
        operations = self.api.operations()
        for method, path in sorted(operations):
            wrong = next(m for m in ("POST", "GET", "PUT") if (m, path) not in operations)
            with self.subTest(f"{wrong} {path}"):
                refused = call(self.port, wrong,
                               path.replace("{name}", "some-model").replace("{id}", "some-job"))
                self.assertDescribedError(refused, 405, "UNIMPLEMENTED")
                allowed = {m.strip() for m in refused[1].get("Allow", "").split(",")}
                documented = {m for m, p in operations if p == path}
                self.assertTrue(documented <= allowed and wrong not in allowed,
                                f"Allow: {refused[1].get('Allow')!r}, documented "
                                f"{sorted(documented)}")

    def test_the_validator_refuses_altered_real_answers(self):
        # Or the checks of the answers above could never fail.
        v, api = self.api.validator, self.api
        answer = self.translate_answer()
        stream_line = next(line for line in self.stream_lines() if "translation" in line)
        models = json.loads(self.exchange("models", self.port, "GET", "/v1/models",
                                          status=200)[2])
        bad_request = json.loads(self.exchange("translate: not JSON", self.port, "POST",
                                               "/v1/translate", '{"texts": [', status=400)[2])
        ok_schema = api.response_schema("POST", "/v1/translate", 200, "application/json")
        bad_schema = api.response_schema("POST", "/v1/translate", 400, "application/json")
        line_schema = api.response_schema("POST", "/v1/translate:stream", 200,
                                          "application/x-ndjson")
        models_schema = api.response_schema("GET", "/v1/models", 200, "application/json")
        self.assertEqual(v.errors(ok_schema, answer) + v.errors(line_schema, stream_line)
                         + v.errors(models_schema, models) + v.errors(bad_schema, bad_request),
                         [], "the real answers are accepted")

        def refuses(what, schema, value, needle):
            with self.subTest(f"refuses {what}"):
                errors = v.errors(schema, value)
                self.assertTrue(any(needle in e for e in errors),
                                f"no error holding {needle!r}: {errors}")

        altered = copy.deepcopy(answer)
        altered["extra"] = 1
        refuses("an undocumented field in an answer", ok_schema, altered,
                "undocumented field extra")
        altered = copy.deepcopy(answer)
        altered["translations"][0]["hypotheses"][0]["debug"] = "x"
        refuses("an undocumented field deep in an answer", ok_schema, altered,
                "undocumented field debug")
        altered = copy.deepcopy(answer)
        del altered["translations"][0]["hypotheses"][0]["score"]
        refuses("a missing field", ok_schema, altered, "required field score")
        altered = copy.deepcopy(answer)
        altered["translations"][0]["source_tokens"] = str(
            altered["translations"][0]["source_tokens"])
        refuses("a number as a string", ok_schema, altered, "not of type integer")
        altered = copy.deepcopy(answer)
        altered["translations"][0]["sentences"][0]["begin"] = -1
        refuses("a negative offset", ok_schema, altered, "below the minimum")
        altered = copy.deepcopy(models)
        altered["models"][0]["is_default"] = 1
        refuses("a number for a boolean", models_schema, altered, "not of type boolean")
        refuses("an error code of another status", bad_schema,
                dict(bad_request, code="NOT_FOUND"), "is not one of")
        refuses("an unknown error code", bad_schema, dict(bad_request, code="OOPS"),
                "is not one of")
        both = dict(stream_line, error={"code": 5, "message": "x"})
        refuses("a stream line with translation and error", line_schema, both, "oneOf")
        neither = {k: val for k, val in stream_line.items() if k != "translation"}
        refuses("a stream line with neither translation nor error", line_schema, neither,
                "oneOf")


# The keys of AdminTest's server: an operator's (admin=true) and a plain one.
ADMIN_KEY, USER_KEY = f"ops-{os.urandom(16).hex()}", f"user-{os.urandom(16).hex()}"


class AdminTest(OpenApiTestCase):
    """The operators' calls, on a server with API keys (and, for their absence, on
    ServingTest's, which has none)."""

    # One request per operators' call that an admin key's call must answer with a success.
    SUCCESSES = {
        ("POST", "/v1/models/{name}:load"): {},
        ("POST", "/v1/models/{name}:unload"): {},
    }

    @classmethod
    def setUpClass(cls):
        keys = os.path.join(cls.class_temp_dir(), "keys")
        with open(keys, "w") as f:
            for name, key, attributes in (("ops", ADMIN_KEY, "admin=true"), ("user", USER_KEY, "")):
                f.write(f"{name} sha256:{hashlib.sha256(key.encode()).hexdigest()} {attributes}\n")
        cls.server_flags = FLAGS + [f"--api_keys_file={keys}"]
        super().setUpClass()
        models = json.loads(call(cls.port, "GET", "/v1/models", headers=cls.key(ADMIN_KEY))[2])
        cls.model = models["models"][0]["name"]

    @staticmethod
    def key(key):
        return {"Authorization": f"Bearer {key}"}

    def path(self, call_name, model=None):
        return f"/v1/models/{model or self.model}:{call_name}"

    def test_every_operators_call_answers_a_success_to_an_admin_key(self):
        for (method, path), body in sorted(self.SUCCESSES.items()):
            concrete = path.replace("{name}", self.model)
            result = self.exchange(f"{method} {path}", self.port, method, concrete, body,
                                   headers=self.key(ADMIN_KEY), status=200, request_valid=True)
            # A body is optional.
            self.exchange(f"{method} {path} without a body", self.port, method, concrete,
                          headers=self.key(ADMIN_KEY), status=200)
            self.assertEqual(json.loads(result[2])["name"], self.model)

    def test_loads_and_unloads_answer_the_models_state(self):
        ex, port, admin = self.exchange, self.port, self.key(ADMIN_KEY)
        unloaded = json.loads(ex("unload", port, "POST", self.path("unload"), headers=admin,
                                 status=200)[2])
        self.assertEqual((unloaded["state"], unloaded["resident_bytes"]),
                         ("MODEL_STATE_AVAILABLE", "0"))
        # Its deadline passed before the load could end.
        ex("load: a deadline that passes", port, "POST", self.path("load"),
           headers={**admin, "X-Request-Timeout": "0s"}, status=504)
        loaded = json.loads(ex("load", port, "POST", self.path("load"), {"name": self.model},
                               headers={**admin, "X-Request-Timeout": "60s"}, status=200,
                               request_valid=True)[2])
        self.assertEqual(loaded["state"], "MODEL_STATE_LOADED")
        self.assertNotEqual(loaded["resident_bytes"], "0")

    def test_refusals_are_documented(self):
        ex, port, admin = self.exchange, self.port, self.key(ADMIN_KEY)
        for call_name in ("load", "unload"):
            path = self.path(call_name)
            ex(f"{call_name}: no key", port, "POST", path, status=401)
            denied = ex(f"{call_name}: a key without admin", port, "POST", path,
                        headers=self.key(USER_KEY), status=403)
            self.assertIn('"user" lacks the admin attribute', json.loads(denied[2])["message"])
            ex(f"{call_name}: an unknown model", port, "POST", self.path(call_name, "no-such"),
               headers=admin, status=404)
            ex(f"{call_name}: the body names another model", port, "POST", path,
               {"name": "another"}, headers=admin, status=400, request_valid=True)
            ex(f"{call_name}: an unknown field", port, "POST", path, {"model": self.model},
               headers=admin, status=400, request_valid=False)
            ex(f"{call_name}: a name that is not percent-encoding", port, "POST",
               self.path(call_name, "bad%zz"), headers=admin, status=400)


class LifecycleTest(OpenApiTestCase):
    """Each test a server of its own, loading or draining."""

    server_flags = None

    def test_answers_while_the_models_load_are_documented(self):
        # 16 copies of the model: time to ask while they load.
        specs = ",".join(f"m{i}={e2e_suite.ARGS.model_dir}" for i in range(16))
        server = self.start_mtserve(f"--model={specs}", "--workers=1", "--cache_bytes=0",
                                    wait_serving=False)
        server.wait_ready("loading")
        port = server.http_port
        self.api = fetch_description(port)
        # While the models load: 503 from readyz, models and translate, stream lines with errors.
        ready = self.exchange("loading: /readyz", port, "GET", "/readyz")
        models = self.exchange("loading: /v1/models", port, "GET", "/v1/models")
        translate = self.exchange("loading: /v1/translate", port, "POST", "/v1/translate",
                                  {"texts": ["A dog runs."]}, request_valid=True)
        stream = self.exchange("loading: /v1/translate:stream", port, "POST",
                               "/v1/translate:stream", '{"id": "1", "text": "A dog runs."}\n',
                               request_valid=True)
        self.assertNotIn("mtserve: serving", server.stderr(),
                         "the requests above were not all answered while the models loaded")
        self.assertEqual([ready[0], models[0], translate[0], stream[0]], [503, 503, 503, 200],
                         "/readyz, /v1/models, /v1/translate, /v1/translate:stream")
        self.assertEqual(json.loads(stream[2])["error"]["code"], 14,
                         f"the stream line's error, UNAVAILABLE: {stream[2][:200]!r}")
        self.exchange("loading: /openapi.json", port, "GET", "/openapi.json", status=200)

    def test_answers_while_draining_are_documented(self):
        server = self.start_mtserve("--workers=1", "--http_timeout=60s", "--shutdown_grace=120s",
                                    "--cache_bytes=0")
        port = server.http_port
        self.api = fetch_description(port)
        # A translation in flight, then SIGTERM.
        document = " ".join(SENTENCES[:300])
        translating = server.terminate_during(
            lambda: call(port, "POST", "/v1/translate", {"texts": [document]}, timeout=300))
        ex = self.exchange
        ex("draining: /readyz", port, "GET", "/readyz", status=503)
        ex("draining: /healthz", port, "GET", "/healthz", status=200)
        ex("draining: /v1/models", port, "GET", "/v1/models", status=503)
        ex("draining: /v1/translate", port, "POST", "/v1/translate", {"texts": ["a"]},
           status=503, request_valid=True)
        ex("draining: /v1/translate:stream", port, "POST", "/v1/translate:stream",
           '{"id": "1", "text": "a"}\n', status=503, request_valid=True)
        ex("draining: /openapi.json", port, "GET", "/openapi.json", status=200)
        translating.join(300)
        answer = translating.result or (0, {}, b"")
        SEEN.setdefault(("POST", "/v1/translate"), set()).add(answer[0])
        with self.subTest("draining: the translation in flight"):
            problems = self.api.answer_problems(
                self.api.doc["paths"]["/v1/translate"]["post"]["responses"].get(str(answer[0])),
                answer, "POST /v1/translate")
            self.assertEqual(problems, [])
        self.assertEqual(answer[0], 200, f"the translation in flight: {answer[2][:200]!r}")
        self.assertEqual(server.process.wait(timeout=120), 0, server.stderr())


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "proto", "model_dir", "multi30k_text")
