#!/usr/bin/env python3
"""Checks that no include points up a layer (docs/design.md): each layer may include those below
it and nothing above. Prints every include that breaks the rule, with its file and line, and
exits 1 if there is one.

  base/ < model/ < text/ < serving/ < frontends/ < server/

(tools/ and client/ sit beside the server: they may include any layer but server/; nothing
includes them.) Usage: scripts/check_layers.py [REPO_DIR]
"""
import os
import re
import sys

LAYERS = ["base", "model", "text", "serving", "frontends", "server"]
SIDE = {"tools": "frontends", "client": "frontends"}  # What they may include up to.
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def rank(top):
    if top in LAYERS:
        return LAYERS.index(top)
    return None


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
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
