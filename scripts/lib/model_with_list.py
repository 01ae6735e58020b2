#!/usr/bin/env python3
"""A model directory with a lexical shortlist of one's choice: the model's files symlinked into a
new directory (a vmap.txt or lex.s2t of its own left out: the engine reads vmap.txt first, then
lex.s2t) and the list copied in as vmap.txt, the file the engine picks up with the model.

Usage (from a shell): model_with_list.py MODEL_DIR VMAP OUT_DIR
"""
import os
import shutil
import sys

# The shortlist files a model directory may hold (model/shortlist.h).
LIST_FILES = ("vmap.txt", "lex.s2t")


def model_with_list(model_dir, vmap, directory):
    """Makes `directory` (which must not exist): `model_dir`'s files symlinked but its own list,
    and `vmap` as vmap.txt. Returns `directory`."""
    os.makedirs(directory)
    for name in os.listdir(model_dir):
        if name not in LIST_FILES:
            os.symlink(os.path.abspath(os.path.join(model_dir, name)),
                       os.path.join(directory, name))
    shutil.copyfile(vmap, os.path.join(directory, "vmap.txt"))
    return directory


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model_with_list(*sys.argv[1:])
