#!/usr/bin/python3
"""The terminology guarantee on a real mtserve (the embedded model), over HTTP's /v1/translate
and gRPC's Translate: for 60 lines of Multi30k's test_2016_flickr, each with its terms from an
independent dictionary (tests/data/glossary/, made by tools/make_glossary_benchmark.py from
Debian's FreeDict English-German dictionary), every occurrence of a glossary entry's source gives
one of its target forms, exactly as written (but for the first letter's case at the start of a
sentence, where the answer's sentence ranges say sentences start), in EVERY hypothesis returned:
beam search with three hypotheses, greedy search, and sampling with a seed. Without the terms,
the same lines miss some of them (the guarantee is not met by chance).

Usage: glossary_guarantee_test.py BIN_DIR STUBS_DIR SOURCE.en GLOSSARY.jsonl [-- unittest arguments]
"""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import call  # noqa: E402
from glossary_terms import sentence_starts_from_ranges, source_spans, unmet_entries  # noqa: E402

SEARCHES = {
    "beam": {"beam_size": 4, "num_hypotheses": 3},
    "greedy": {"beam_size": 1},
    "sampling": {"beam_size": 1, "sampling_topk": 20, "sampling_temperature": 1.0, "seed": 7},
}


def load_lines():
    """[(source line, glossary)] of the subset, in its order."""
    with open(e2e_suite.ARGS.source, encoding="utf-8") as f:
        sources = f.read().splitlines()
    with open(e2e_suite.ARGS.glossary, encoding="utf-8") as f:
        rows = [json.loads(row) for row in f if row.strip()]
    return [(sources[row["line"] - 1], row["glossary"]) for row in rows]


class GlossaryGuaranteeTest(e2e_suite.MtserveTestCase):
    server_flags = ()

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.lines = load_lines()
        _, cls.pb, _ = e2e_suite.grpc_stubs()
        cls.stub = cls.translator_stub()

    def test_the_subset_holds_terms(self):
        self.assertEqual(len(self.lines), 60)
        occurrences = sum(len(source_spans(source, entry["source"]))
                          for source, glossary in self.lines for entry in glossary)
        self.assertGreaterEqual(occurrences, 150)

    def http_hypotheses(self, source, glossary, options):
        """[(text, sentence starts)] of the answer's hypotheses."""
        body = {"texts": [source], "options": dict(options)}
        if glossary is not None:
            body["options"]["glossary"] = glossary
        status, _, answer = call(self.server.http_port, "POST", "/v1/translate", body)
        self.assertEqual(status, 200, answer[:500])
        hypotheses = json.loads(answer)["translations"][0]["hypotheses"]
        return [(h["text"], sentence_starts_from_ranges(h["text"], h.get("sentences", [])))
                for h in hypotheses]

    def grpc_hypotheses(self, source, glossary, options):
        request = self.pb.TranslateRequest(
            texts=[source.encode()], options=self.pb.DecodingOptions(
                **options, glossary=[self.pb.GlossaryEntry(source=e["source"],
                                                           targets=e["targets"])
                                     for e in glossary or []]))
        translation = self.stub.Translate(request, timeout=120).translations[0]
        return [(h.text, sentence_starts_from_ranges(
            h.text, [{"begin": r.begin, "end": r.end} for r in h.sentences]))
            for h in translation.hypotheses]

    def unmet(self, translate, search, with_terms=True):
        """The subset's lines, with `search`'s options, each hypothesis checked: [(line, the
        hypothesis, unmet entries)], and the hypotheses' count of each answer."""
        options = SEARCHES[search]
        failures, counts = [], set()
        for source, glossary in self.lines:
            hypotheses = translate(source, glossary if with_terms else None, options)
            counts.add(len(hypotheses))
            for text, starts in hypotheses:
                missing = unmet_entries(source, glossary, text, starts)
                if missing:
                    failures.append((source, text, [(e["source"], e["targets"], n, found)
                                                    for e, n, found in missing]))
        return failures, counts

    def assertGuarantee(self, translate, search):
        failures, counts = self.unmet(translate, search)
        self.assertEqual(counts, {SEARCHES[search].get("num_hypotheses", 1)})
        self.assertEqual(failures, [], f"{len(failures)} hypotheses miss a term (source, "
                         "hypothesis, [(term, forms, occurrences, forms found)]); the first: "
                         + json.dumps(failures[:5], ensure_ascii=False, indent=1))

    def test_http_beam_search_every_hypothesis(self):
        self.assertGuarantee(self.http_hypotheses, "beam")

    def test_http_greedy(self):
        self.assertGuarantee(self.http_hypotheses, "greedy")

    def test_http_sampling_with_a_seed(self):
        self.assertGuarantee(self.http_hypotheses, "sampling")

    def test_grpc_beam_search_every_hypothesis(self):
        self.assertGuarantee(self.grpc_hypotheses, "beam")

    def test_grpc_greedy(self):
        self.assertGuarantee(self.grpc_hypotheses, "greedy")

    def test_grpc_sampling_with_a_seed(self):
        self.assertGuarantee(self.grpc_hypotheses, "sampling")

    def test_without_the_terms_some_are_missed(self):
        failures, _ = self.unmet(self.http_hypotheses, "beam", with_terms=False)
        self.assertGreater(len(failures), 10)


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "source", "glossary")
