#!/usr/bin/env python3
"""A model that cannot load must fail the suites that translate with it, not skip them.

googletest skips every test of a suite whose SetUpTestSuite() fails an ASSERT, and ctest counts a
test whose output says "[  SKIPPED ]" as skipped, not failed: `ctest` then reports "100% tests
passed" with the engine broken. This runs each test binary that loads the model with
MTSERVE_TEST_MODEL_DIR pointing at a directory holding no model, and checks that every test it
runs fails and none is skipped.

Usage: broken_model_test.py TEST_BINARY:GTEST_FILTER...  (the suites that use the test model)
"""
import os
import re
import subprocess
import sys
import tempfile


def check(binary_and_filter, model_dir):
    binary, gtest_filter = binary_and_filter.rsplit(":", 1)
    env = dict(os.environ, MTSERVE_TEST_MODEL_DIR=model_dir)
    run = subprocess.run([binary, f"--gtest_filter={gtest_filter}"], env=env,
                         capture_output=True, text=True, timeout=600)
    output = run.stdout + run.stderr
    name = f"{os.path.basename(binary)} {gtest_filter}"
    ran = re.search(r"^\[==========\] (\d+) tests? from .* ran\.", output, re.M)
    failed = len(re.findall(r"^\[  FAILED  \] \S+\.\S+ \(", output, re.M))
    problems = []
    if run.returncode == 0:
        problems.append("exited 0")
    if "[  SKIPPED ]" in output:
        problems.append("skipped tests (ctest would count them as not failed)")
    if ran is None or int(ran.group(1)) == 0:
        problems.append("ran no test")
    elif failed != int(ran.group(1)):
        problems.append(f"{failed} of {ran.group(1)} tests failed; all must")
    if "config.json" not in output:
        problems.append("does not say why (the missing config.json)")
    if problems:
        print(f"FAIL {name}: " + "; ".join(problems))
        print(output[-3000:])
        return False
    print(f"ok   {name}: all {ran.group(1)} tests fail, none skipped")
    return True


def main():
    binaries = sys.argv[1:]
    if not binaries:
        sys.exit(__doc__)
    with tempfile.TemporaryDirectory(prefix="mtserve_no_model_") as model_dir:
        results = [check(binary, model_dir) for binary in binaries]
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
