#!/usr/bin/env python3
"""A model that cannot load must fail the suites that translate with it, not skip them.

googletest skips every test of a suite whose SetUpTestSuite() fails an ASSERT, and ctest counts a
test whose output says "[  SKIPPED ]" as skipped, not failed: `ctest` then reports "100% tests
passed" with the engine broken. This runs each test binary that loads the model with
MTSERVE_TEST_MODEL_DIR pointing at a directory holding no model, and checks that every test it
runs fails and none is skipped.

Usage: broken_model_test.py TEST_BINARY:GTEST_FILTER... [-- UNITTEST_ARGS]
  (the suites that use the test model)
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../test_lib"))
import e2e_suite  # noqa: E402


class BrokenModelTest(unittest.TestCase):
    def test_every_suite_fails_and_none_skips(self):
        with tempfile.TemporaryDirectory(prefix="mtserve_no_model_") as model_dir:
            for binary_and_filter in e2e_suite.ARGS.suites:
                binary, gtest_filter = binary_and_filter.rsplit(":", 1)
                with self.subTest(f"{os.path.basename(binary)} {gtest_filter}"):
                    self.check_fails(binary, gtest_filter, model_dir)

    def check_fails(self, binary, gtest_filter, model_dir):
        env = dict(os.environ, MTSERVE_TEST_MODEL_DIR=model_dir)
        run = subprocess.run([binary, f"--gtest_filter={gtest_filter}"], env=env,
                             capture_output=True, text=True, timeout=600)
        output = run.stdout + run.stderr
        tail = f"\n--- its output's end:\n{output[-3000:]}"
        ran = re.search(r"^\[==========\] (\d+) tests? from .* ran\.", output, re.M)
        failed = len(re.findall(r"^\[  FAILED  \] \S+\.\S+ \(", output, re.M))
        self.assertNotEqual(run.returncode, 0, "exited 0" + tail)
        self.assertNotIn("[  SKIPPED ]", output,
                         "skipped tests (ctest would count them as not failed)" + tail)
        self.assertIsNotNone(ran, "ran no test" + tail)
        self.assertNotEqual(int(ran.group(1)), 0, "ran no test" + tail)
        self.assertEqual(failed, int(ran.group(1)),
                         f"{failed} of {ran.group(1)} tests failed; all must" + tail)
        self.assertIn("config.json", output, "does not say why (the missing config.json)" + tail)


if __name__ == "__main__":
    e2e_suite.main(__doc__, ("suites", {"nargs": "+", "metavar": "TEST_BINARY:GTEST_FILTER"}))
