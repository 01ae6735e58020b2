#!/usr/bin/env python3
"""Routing by language from the command line: offline equals served.

Mixed German and French Multi30k lines into English, with the source detected per line
(--source=auto --target=en), through mttranslate given the three trained models (en-de, de-en,
fr-en), through mtclient and through the Python client (one call per batch, and a stream) against
an mtserve serving the same three: each gives exactly what mttranslate gives each line with its
own model named alone (de-en for the German lines, fr-en for the French), and reports the language
it detected. A Czech line, which no model reads into English, gets an error on stderr naming its
line, an empty output line and exit status 1, while the other lines are translated. A model and a
target together, or several models and no target, are refused.

Usage: language_routing_test.py BIN_DIR STUBS_DIR MODELS_DIR MULTI30K_DIR [-- unittest arguments]
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402
from e2e_suite import binary  # noqa: E402

PYTHON_CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "../../../client/python/translate.py")


def model_dir(name):
    return os.path.join(e2e_suite.ARGS.models_dir, f"multi30k-{name}")


def multi30k(language, first, count):
    with open(os.path.join(e2e_suite.ARGS.multi30k_dir, f"test_2016_flickr.{language}"),
              encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f][first:first + count]


def run(command, lines):
    return subprocess.run(command, input="".join(line + "\n" for line in lines),
                          capture_output=True, text=True, timeout=600)


def mttranslate(lines, *flags):
    return run([binary("mttranslate"), "--threads=1", *flags], lines)


class LanguageRoutingTest(e2e_suite.MtserveTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server_flags = ("--workers=1", f"--model=en-de={model_dir('en-de')}",
                            f"--model=de-en={model_dir('de-en')}",
                            f"--model=fr-en={model_dir('fr-en')}")
        super().setUpClass()
        german, french = multi30k("de", 0, 3), multi30k("fr", 3, 2)
        cls.lines = [german[0], french[0], german[1], french[1], german[2]]
        cls.languages = ["de", "fr", "de", "fr", "de"]
        cls.czech = multi30k("cs", 10, 1)[0]
        # The expectation: each language's lines through its model alone, no routing.
        alone = {}
        for language, lines in (("de", german), ("fr", french)):
            result = mttranslate(lines, f"--model={model_dir(language + '-en')}")
            if result.returncode != 0:
                raise RuntimeError(f"mttranslate --model={language}-en failed: {result.stderr}")
            alone[language] = iter(result.stdout.splitlines())
        cls.expected = [next(alone[language]) for language in cls.languages]

    def clients(self, *flags):
        """(name, command) of mtclient and the Python client (batches, a stream) with `flags`."""
        server = f"--server=127.0.0.1:{self.server.grpc_port}"
        python = ["/usr/bin/python3", PYTHON_CLIENT, server,
                  f"--stubs_dir={e2e_suite.ARGS.stubs_dir}", *flags]
        return [("mtclient", [binary("mtclient"), "translate", server, "--batch_size=2", *flags]),
                ("python", python + ["--batch_size=2"]),
                ("python --stream", python + ["--stream"])]

    def assertDetected(self, stderr, languages, models):
        """stderr says "line N: detected LANG CONFIDENCE (MODEL)" for each line, confident."""
        said = {}
        for line in stderr.splitlines():
            if line.startswith("line ") and ": detected " in line:
                number, _, rest = line[len("line "):].partition(": detected ")
                language, confidence, model = rest.split()
                said[int(number)] = (language, float(confidence), model)
        self.assertEqual(sorted(said), list(range(1, len(languages) + 1)), stderr)
        for number, (language, confidence, model) in said.items():
            self.assertEqual((language, model),
                             (languages[number - 1], f"({models[number - 1]})"), stderr)
            self.assertGreater(confidence, 50, stderr)

    def test_mttranslate_auto_equals_each_lines_own_model(self):
        three = [model_dir(name) for name in ("en-de", "de-en", "fr-en")]
        for flags in ([f"--model={','.join(three)}"], [f"--model={d}" for d in three]):
            with self.subTest(flags=flags):
                routed = mttranslate(self.lines, *flags, "--source=auto", "--target=en")
                self.assertEqual(routed.returncode, 0, routed.stderr)
                self.assertEqual(routed.stdout.splitlines(), self.expected, routed.stderr)

    def test_mttranslate_given_source_uses_its_model(self):
        german = [line for line, language in zip(self.lines, self.languages) if language == "de"]
        routed = mttranslate(german, f"--model={model_dir('fr-en')},{model_dir('de-en')}",
                             "--source=de", "--target=en")
        self.assertEqual(routed.returncode, 0, routed.stderr)
        self.assertEqual(routed.stdout.splitlines(),
                         [e for e, language in zip(self.expected, self.languages)
                          if language == "de"], routed.stderr)

    def test_clients_auto_equal_offline(self):
        models = [f"{language}-en" for language in self.languages]
        for name, command in self.clients("--source=auto", "--target=en"):
            with self.subTest(client=name):
                served = run(command, self.lines)
                self.assertEqual(served.returncode, 0, served.stderr)
                self.assertEqual(served.stdout.splitlines(), self.expected, served.stderr)
                self.assertDetected(served.stderr, self.languages, models)

    def test_a_line_no_model_reads_fails_alone(self):
        # The Czech line third: in the second of mtclient's requests of two lines.
        lines = self.lines[:2] + [self.czech] + self.lines[2:]
        expected = self.expected[:2] + [""] + self.expected[2:]
        offline = mttranslate(lines, f"--model={model_dir('de-en')},{model_dir('fr-en')}",
                              "--target=en")
        runs = [("mttranslate", offline)] + [
            (name, run(command, lines)) for name, command in self.clients("--target=en")]
        for name, result in runs:
            with self.subTest(program=name):
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertEqual(result.stdout.splitlines(), expected, result.stderr)
                errors = [line for line in result.stderr.splitlines() if "detected as" in line]
                self.assertEqual(len(errors), 1, result.stderr)
                self.assertIn("line 3: ", errors[0])
                self.assertIn("detected as cs", errors[0])
                self.assertIn("into en", errors[0])
                if name != "mttranslate":
                    self.assertIn("error: INVALID_ARGUMENT: line 3: ", result.stderr)

    def test_model_and_target_together_are_refused(self):
        for name, command in self.clients("--model=de-en", "--target=en"):
            with self.subTest(client=name):
                refused = run(command, self.lines)
                self.assertEqual(refused.returncode, 2, refused.stderr)
                self.assertIn("give --model or --target, not both", refused.stderr)
                self.assertEqual(refused.stdout, "")

    def test_mttranslate_refuses_what_routes_nothing(self):
        two = f"--model={model_dir('de-en')},{model_dir('fr-en')}"
        for flags, needle in (([two], "give --target"),
                              ([two, "--target=cs"], "no model here translates into cs"),
                              ([two, "--source=cs", "--target=en"],
                               "no model here translates cs into en"),
                              ([two, "--source=de"], "--source needs --target"),
                              ([two, "--target=en", "--language_model="],
                               "several languages are read into en (de, fr)")):
            with self.subTest(flags=flags):
                refused = mttranslate(self.lines, *flags)
                self.assertEqual(refused.returncode, 2, refused.stderr)
                self.assertIn(needle, refused.stderr)
                self.assertEqual(refused.stdout, "")


if __name__ == "__main__":
    e2e_suite.main(__doc__, "bin_dir", "stubs_dir", "models_dir", "multi30k_dir")
