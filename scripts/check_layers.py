#!/usr/bin/env python3
"""Checks the rules between the layers (docs/design.md) and prints every place that breaks one,
with its file and line; exits 1 if there is one:

- No include points up a layer: each layer may include those below it and nothing above.

    base/ < model/ < text/ < serving/ < frontends/ < server/

  (tools/ and client/ sit beside the server: they may include any layer but server/; nothing
  includes them.)
- The fuzz build links the project's libraries and names no source file outside tests/fuzz/:
  every source file tests/fuzz/CMakeLists.txt names is a file of tests/fuzz/.

Usage: scripts/check_layers.py [REPO_DIR]
"""
import os
import re
import sys

LAYERS = ["base", "model", "text", "serving", "frontends", "server"]
SIDE = {"tools": "frontends", "client": "frontends"}  # What they may include up to.
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
FUZZ_DIR = os.path.join("tests", "fuzz")
# A source file named in CMake: a word ending in a C or C++ extension.
SOURCE = re.compile(r'[^\s()"]+\.(?:cc|cpp|cxx|c|h|hpp)\b')


def rank(top):
    if top in LAYERS:
        return LAYERS.index(top)
    return None


def fuzz_sources_outside(root):
    """The source files tests/fuzz/CMakeLists.txt names that are not files of tests/fuzz/ (a path
    through a variable such as ${PROJECT_SOURCE_DIR}, or out of the directory), printed with
    their line; their count."""
    path = os.path.join(root, FUZZ_DIR, "CMakeLists.txt")
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    broken = 0
    for number, line in enumerate(lines, 1):
        code = line.split("#", 1)[0]
        for match in SOURCE.finditer(code):
            name = match.group(0)
            if "/" not in name:  # A file of the directory (its name may be made: ${name}.cc).
                inside = "$" in name or os.path.isfile(os.path.join(root, FUZZ_DIR, name))
            else:  # A path: inside only if written out and within the directory.
                full = os.path.realpath(os.path.join(root, FUZZ_DIR, name))
                inside = "$" not in name and full.startswith(
                    os.path.realpath(os.path.join(root, FUZZ_DIR)) + os.sep)
            if not inside:
                print(f"{FUZZ_DIR}/CMakeLists.txt:{number}: names {name}, a source outside "
                      f"{FUZZ_DIR}/ (link the library that has it)")
                broken += 1
    return broken


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    broken = 0
    for top in LAYERS + list(SIDE):
        limit = rank(top) if top in LAYERS else rank(SIDE[top])
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for match in INCLUDE.finditer(text):
                    included = match.group(1)
                    target = included.split("/", 1)[0]
                    if target in SIDE and target != top:
                        bad = True
                    else:
                        level = rank(target)
                        bad = level is not None and level > limit
                    if bad:
                        line = text.count("\n", 0, match.start()) + 1
                        print(f"{os.path.relpath(path, root)}:{line}: includes {included}, "
                              f"a layer above {top}/")
                        broken += 1
    print(f"layers: {broken} includes point up a layer" if broken else
          "layers: every include points down or across")
    outside = fuzz_sources_outside(root)
    print(f"layers: the fuzz build names {outside} sources outside {FUZZ_DIR}/" if outside else
          f"layers: the fuzz build names sources of {FUZZ_DIR}/ only")
    return 1 if broken or outside else 0


if __name__ == "__main__":
    sys.exit(main())
