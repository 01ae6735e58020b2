#!/usr/bin/env python3
"""Stored glossaries on a real mtserve, over HTTP (/v1/glossaries) and gRPC (CreateGlossary,
ListGlossaries, GetGlossary, DeleteGlossary).

- Made, listed, read and deleted through both APIs, which see the same glossaries; a glossary of
  a pair no model translates, or over --max_glossary_entries, is refused naming the limit.
- --glossary_dir's files (NAME.SRC-TGT.tsv, .csv) are listed read-only to every caller and
  cannot be deleted; a file added is served after SIGHUP.
- With API keys, each key sees only its own glossaries (another's id is NOT_FOUND) and a call
  without a key is UNAUTHENTICATED.
- With --glossary_store_dir, a glossary made before a restart is there after it, same id.

Usage: glossaries_test.py BIN_DIR STUBS_DIR [-- UNITTEST_ARGS]
"""
import hashlib
import json
import os
import signal
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402
from mtserve_process import wait_until  # noqa: E402

KEYS = {name: f"{name}-{os.urandom(16).hex()}" for name in ("alice", "bob")}
ENTRIES = [{"source": "car", "targets": ["Wagen", "Auto"]}, {"source": "house", "targets": ["Haus"]}]


def setUpModule():
    global grpc, pb, pb_grpc
    grpc, pb, pb_grpc = e2e_suite.grpc_stubs()


def json_headers(key=None):
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {KEYS[key]}"
    return headers


def create_http(port, name, key=None, entries=ENTRIES, source="en", target="de"):
    return call(port, "POST", "/v1/glossaries",
                {"name": name, "source_language": source, "target_language": target,
                 "entries": entries}, json_headers(key))


def metadata(key):
    return [("authorization", f"Bearer {KEYS[key]}")] if key else None


class GlossaryTestCase(e2e_suite.MtserveTestCase):

    def assertHttp(self, result, status):
        self.assertEqual(result[0], status, result[2][:400])
        return json.loads(result[2])

    def http_ids(self, port, key=None):
        answer = self.assertHttp(call(port, "GET", "/v1/glossaries", None, json_headers(key)), 200)
        return [g["id"] for g in answer["glossaries"]]

    def grpc_code(self, method, request, key=None):
        try:
            return grpc.StatusCode.OK, method(request, timeout=60, metadata=metadata(key))
        except grpc.RpcError as e:
            return e.code(), e


class KeysOffTest(GlossaryTestCase):
    """One server without keys, with a files directory."""

    @classmethod
    def setUpClass(cls):
        cls.files = cls.class_temp_dir()
        with open(os.path.join(cls.files, "products.en-de.tsv"), "w") as f:
            f.write("car\tWagen\ncar\tAuto\nbike\tFahrrad\n")
        with open(os.path.join(cls.files, "names.en-de.csv"), "w") as f:
            f.write('"Smith, Anna","Schmidt, Anna",en,de\n')
        cls.server_flags = ("--workers=1", f"--glossary_dir={cls.files}",
                            "--max_glossary_entries=3", "--reload_interval=1h")
        super().setUpClass()
        cls.port = cls.server.http_port
        cls.stub = cls.translator_stub()

    def test_http_and_grpc_see_the_same_glossaries(self):
        made = self.assertHttp(create_http(self.port, "http-made"), 201)
        self.assertEqual(made["name"], "http-made")
        self.assertEqual((made["source_language"], made["target_language"]), ("en", "de"))
        self.assertEqual(made["entry_count"], "2")  # uint64 is a string in the JSON mapping.
        self.assertFalse(made["read_only"])
        self.assertTrue(made["creation_time"].endswith("Z"), made)
        code, grpc_made = self.grpc_code(self.stub.CreateGlossary, pb.CreateGlossaryRequest(
            name="grpc-made", source_language="en", target_language="de",
            entries=[pb.GlossaryEntry(source="tree", targets=["Baum"])]))
        self.assertEqual(code, grpc.StatusCode.OK, grpc_made)
        self.assertEqual(grpc_made.entry_count, 1)

        ids = self.http_ids(self.port)
        self.assertIn(made["id"], ids)
        self.assertIn(grpc_made.id, ids)
        code, listed = self.grpc_code(self.stub.ListGlossaries, pb.ListGlossariesRequest())
        self.assertEqual(code, grpc.StatusCode.OK, listed)
        self.assertEqual([g.id for g in listed.glossaries], ids)

        # Each API reads what the other made.
        got = self.assertHttp(call(self.port, "GET", f"/v1/glossaries/{grpc_made.id}"), 200)
        self.assertEqual(got["entries"], [{"source": "tree", "targets": ["Baum"]}])
        code, glossary = self.grpc_code(self.stub.GetGlossary, pb.GetGlossaryRequest(id=made["id"]))
        self.assertEqual(code, grpc.StatusCode.OK, glossary)
        self.assertEqual([(e.source, list(e.targets)) for e in glossary.entries],
                         [("car", ["Wagen", "Auto"]), ("house", ["Haus"])])

        # Deleted through one, gone from both.
        self.assertHttp(call(self.port, "DELETE", f"/v1/glossaries/{grpc_made.id}"), 200)
        code, _ = self.grpc_code(self.stub.GetGlossary, pb.GetGlossaryRequest(id=grpc_made.id))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, _ = self.grpc_code(self.stub.DeleteGlossary, pb.DeleteGlossaryRequest(id=made["id"]))
        self.assertEqual(code, grpc.StatusCode.OK)
        self.assertErrorAnswer(call(self.port, "GET", f"/v1/glossaries/{made['id']}"), 404,
                               "NOT_FOUND")

    def test_files_are_listed_read_only(self):
        answer = self.assertHttp(call(self.port, "GET", "/v1/glossaries"), 200)
        files = {g["id"]: g for g in answer["glossaries"] if g["read_only"]}
        self.assertEqual(sorted(files), ["names.en-de", "products.en-de"])
        self.assertEqual(files["products.en-de"]["entry_count"], "2")
        self.assertEqual(files["products.en-de"]["name"], "products")
        got = self.assertHttp(call(self.port, "GET", "/v1/glossaries/names.en-de"), 200)
        self.assertEqual(got["entries"], [{"source": "Smith, Anna", "targets": ["Schmidt, Anna"]}])
        self.assertErrorAnswer(call(self.port, "DELETE", "/v1/glossaries/products.en-de"), 400,
                               "FAILED_PRECONDITION", "read-only")
        code, _ = self.grpc_code(self.stub.DeleteGlossary,
                                 pb.DeleteGlossaryRequest(id="products.en-de"))
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)

    def test_refusals_name_the_field_and_limit(self):
        with self.subTest("unserved pair"):
            self.assertErrorAnswer(create_http(self.port, "g", target="xx"), 400,
                                   "INVALID_ARGUMENT", "translates en into xx")
        with self.subTest("too many entries"):
            entries = [{"source": f"w{i}", "targets": ["x"]} for i in range(4)]
            self.assertErrorAnswer(create_http(self.port, "g", entries=entries), 400,
                                   "INVALID_ARGUMENT", "--max_glossary_entries")
        with self.subTest("grpc: no name"):
            code, error = self.grpc_code(self.stub.CreateGlossary, pb.CreateGlossaryRequest(
                source_language="en", target_language="de",
                entries=[pb.GlossaryEntry(source="a", targets=["b"])]))
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("name", error.details())
        with self.subTest("not JSON of the message"):
            self.assertErrorAnswer(call(self.port, "POST", "/v1/glossaries", '{"nom": 1}',
                                        json_headers()), 400, "INVALID_ARGUMENT")

    def test_sighup_reads_a_new_file(self):
        with open(os.path.join(self.files, "late.en-de.tsv"), "w") as f:
            f.write("dog\tHund\n")
        self.addCleanup(os.remove, os.path.join(self.files, "late.en-de.tsv"))
        self.server.process.send_signal(signal.SIGHUP)
        self.assertTrue(wait_until(lambda: "late.en-de" in self.http_ids(self.port)),
                        self.server.stderr())


class KeysOnTest(GlossaryTestCase):
    """Each key's glossaries are its own."""

    @classmethod
    def setUpClass(cls):
        keys = os.path.join(cls.class_temp_dir(), "keys.txt")
        with open(keys, "w") as f:
            for name, key in KEYS.items():
                f.write(f"{name} sha256:{hashlib.sha256(key.encode()).hexdigest()}\n")
        cls.server_flags = ("--workers=1", f"--api_keys_file={keys}")
        super().setUpClass()
        cls.port = cls.server.http_port
        cls.stub = cls.translator_stub()

    def test_two_keys_cannot_see_each_others(self):
        alices = self.assertHttp(create_http(self.port, "alice's", key="alice"), 201)
        code, bobs = self.grpc_code(self.stub.CreateGlossary, pb.CreateGlossaryRequest(
            name="bob's", source_language="en", target_language="de",
            entries=[pb.GlossaryEntry(source="a", targets=["b"])]), key="bob")
        self.assertEqual(code, grpc.StatusCode.OK, bobs)
        self.assertEqual(self.http_ids(self.port, "alice"), [alices["id"]])
        code, listed = self.grpc_code(self.stub.ListGlossaries, pb.ListGlossariesRequest(), "bob")
        self.assertEqual([g.id for g in listed.glossaries], [bobs.id])
        self.assertErrorAnswer(call(self.port, "GET", f"/v1/glossaries/{bobs.id}", None,
                                    json_headers("alice")), 404, "NOT_FOUND")
        code, _ = self.grpc_code(self.stub.GetGlossary, pb.GetGlossaryRequest(id=alices["id"]),
                                 "bob")
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, _ = self.grpc_code(self.stub.DeleteGlossary,
                                 pb.DeleteGlossaryRequest(id=alices["id"]), "bob")
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        self.assertHttp(call(self.port, "GET", f"/v1/glossaries/{alices['id']}", None,
                             json_headers("alice")), 200)

    def test_calls_without_a_key_are_unauthenticated(self):
        self.assertErrorAnswer(call(self.port, "GET", "/v1/glossaries"), 401, "UNAUTHENTICATED")
        self.assertErrorAnswer(create_http(self.port, "g"), 401, "UNAUTHENTICATED")
        code, _ = self.grpc_code(self.stub.ListGlossaries, pb.ListGlossariesRequest())
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)


class RestartTest(GlossaryTestCase):
    """--glossary_store_dir keeps what the API made across a restart."""

    def test_a_restart_keeps_the_glossaries(self):
        store = os.path.join(self.temp_dir(), "store")
        first = self.start_mtserve("--workers=1", f"--glossary_store_dir={store}")
        made = self.assertHttp(create_http(first.http_port, "kept"), 201)
        deleted = self.assertHttp(create_http(first.http_port, "deleted"), 201)
        self.assertHttp(call(first.http_port, "DELETE", f"/v1/glossaries/{deleted['id']}"), 200)
        first.stop()
        second = self.start_mtserve("--workers=1", f"--glossary_store_dir={store}")
        self.assertEqual(self.http_ids(second.http_port), [made["id"]])
        got = self.assertHttp(call(second.http_port, "GET", f"/v1/glossaries/{made['id']}"), 200)
        self.assertEqual(got["entries"], ENTRIES)
        self.assertEqual(got["info"]["creation_time"], made["creation_time"])


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir")
