#!/usr/bin/python3
"""Makes the inputs of benchmark_office_package (docs/benchmarks.md), too large to commit:

  bomb.zip      one entry of 10 MiB of zeros, deflated (about 10 KiB): refused from its ratio
  liar.zip      the same entry with both headers declaring 1000 bytes: refused while inflating
  big-bomb.zip  one entry of 10 GiB of zeros, deflated (about 10 MiB: a file at the server's
                size limit): refused from its declared size
  large.docx    a python3-docx document of about 10 MiB: 6 MiB of photos-like (incompressible)
                images and paragraphs whose XML deflates to about 4 MiB

Usage: tools/make_office_benchmark_inputs.py OUT_DIR   (Debian's python3, with python3-docx)
"""
import copy
import io
import os
import random
import struct
import sys
import zipfile
import zlib

import docx
import docx.oxml.ns
from docx.shared import Inches


def png(width, height, rng):
    """An RGB PNG of random pixels (as good as incompressible, like a photo)."""
    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b""))


def make_bomb(path):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("word/document.xml", bytes(10 << 20))


def make_big_bomb(path):
    zeros = bytes(1 << 20)
    info = zipfile.ZipInfo("word/document.xml")
    info.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open(info, "w", force_zip64=True) as entry:
            for _ in range(10 << 10):
                entry.write(zeros)


def make_liar(bomb, path):
    data = bytearray(open(bomb, "rb").read())
    # Local header: uncompressed size at offset 22. Central directory entry: at offset 24.
    struct.pack_into("<I", data, 22, 1000)
    central = data.rfind(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 1000)
    open(path, "wb").write(data)


def make_large_docx(path):
    rng = random.Random(7)
    words = ("the weather was very cold and the river froze while people walked across "
             "to the market on the other side carrying bread fish and wool").split()
    document = docx.Document()
    for i in range(3):
        document.add_picture(io.BytesIO(png(1024, 680, rng)), width=Inches(5))
    # python3-docx makes one paragraph (a plain run, a bold run); copies of it with other words
    # fill the body (adding each through python3-docx costs time growing with the document).
    template = document.add_paragraph("text")
    template.add_run(" bold").bold = True
    element = template._p
    runs = element.findall(docx.oxml.ns.qn("w:r"))

    def add(count):
        for _ in range(count):
            runs[0].find(docx.oxml.ns.qn("w:t")).text = " ".join(
                rng.choice(words) for _ in range(30))
            runs[1].find(docx.oxml.ns.qn("w:t")).text = " " + rng.choice(words)
            element.addprevious(copy.deepcopy(element))

    def save():
        buffer = io.BytesIO()
        document.save(buffer)
        return buffer

    # A first batch measures what a paragraph adds; the rest is added at once to reach 10 MiB.
    base = save().tell()
    add(2000)
    per_paragraph = (save().tell() - base) / 2000
    add(int(((10 << 20) - save().tell()) / per_paragraph) + 200)
    buffer = save()
    open(path, "wb").write(buffer.getvalue())


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    make_bomb(os.path.join(out, "bomb.zip"))
    make_liar(os.path.join(out, "bomb.zip"), os.path.join(out, "liar.zip"))
    make_big_bomb(os.path.join(out, "big-bomb.zip"))
    make_large_docx(os.path.join(out, "large.docx"))
    for name in ("bomb.zip", "liar.zip", "big-bomb.zip", "large.docx"):
        print(name, os.path.getsize(os.path.join(out, name)))


if __name__ == "__main__":
    main()
