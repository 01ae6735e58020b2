#!/usr/bin/python3
"""Makes the small office documents under tests/data/office/ that the C++ tests and the fuzz
targets' seed corpora read, with libraries nobody here wrote (python3-docx, python3-odf).

Usage: tools/make_office_fixtures.py [OUT_DIR]   (default: tests/data/office; Debian's python3,
where the python3-docx and python3-odf packages are)

One maker per file, listed in MAKERS: add a document by adding a function and a line there.
"""
import io
import os
import sys
import zipfile

import docx
from docx.shared import Pt
from odf import opendocument, style, table, text


def make_simple_docx(path):
    """A DOCX with a heading, paragraphs with bold, italic and a split run, a table, a header."""
    document = docx.Document()
    document.add_heading("A short report", level=1)
    paragraph = document.add_paragraph("The weather was ")
    paragraph.add_run("very").bold = True
    paragraph.add_run(" cold, and the ")
    paragraph.add_run("river").italic = True
    paragraph.add_run(" froze.")
    document.add_paragraph("Spaces  between   words and a tab\there are kept.")
    grid = document.add_table(rows=2, cols=2)
    for r, row in enumerate(grid.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"Cell {r}{c}"
    run = document.add_paragraph().add_run("Small print.")
    run.font.size = Pt(8)
    document.sections[0].header.paragraphs[0].text = "Page header"
    document.save(path)


def make_simple_odt(path):
    """An ODT with a heading, paragraphs with a bold span, a list and a table."""
    document = opendocument.OpenDocumentText()
    bold = style.Style(name="Bold", family="text")
    bold.addElement(style.TextProperties(fontweight="bold"))
    document.automaticstyles.addElement(bold)
    document.text.addElement(text.H(outlinelevel=1, text="A short report"))
    paragraph = text.P(text="The weather was ")
    paragraph.addElement(text.Span(stylename=bold, text="very"))
    paragraph.addText(" cold, and the river froze.")
    document.text.addElement(paragraph)
    items = text.List()
    for word in ("First item.", "Second item."):
        item = text.ListItem()
        item.addElement(text.P(text=word))
        items.addElement(item)
    document.text.addElement(items)
    grid = table.Table(name="Grid")
    grid.addElement(table.TableColumn(numbercolumnsrepeated=2))
    for r in range(2):
        row = table.TableRow()
        for c in range(2):
            cell = table.TableCell()
            cell.addElement(text.P(text=f"Cell {r}{c}"))
            row.addElement(cell)
        grid.addElement(row)
    document.text.addElement(grid)
    document.save(path)


def make_small_docx(path):
    """make_simple_docx's document without its template's large parts (styles, theme, numbering,
    thumbnail, custom XML) and the references to them: a real DOCX small enough to seed fuzzing."""
    buffer = io.BytesIO()
    make_simple_docx(buffer)
    dropped = ("word/styles", "word/stylesWithEffects", "word/theme/", "word/numbering",
               "docProps/thumbnail", "customXml/", "word/fontTable", "word/webSettings")
    references = ("styles.xml", "stylesWithEffects.xml", "theme/", "numbering.xml", "thumbnail",
                  "customXml", "fontTable.xml", "webSettings.xml")
    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(path, "w") as target:
        for info in source.infolist():
            if info.filename.startswith(dropped):
                continue
            data = source.read(info.filename).decode("utf-8")
            if info.filename.endswith(".rels") or info.filename == "[Content_Types].xml":
                # Drop each <Relationship .../> or <Override .../> naming a dropped part.
                kept = []
                for piece in data.split("<"):
                    if any(key in piece for key in references) and (
                            piece.startswith("Relationship ") or piece.startswith("Override ")):
                        continue
                    kept.append(piece)
                data = "<".join(kept)
            target.writestr(info, data.encode("utf-8"))


def make_streamed_zip(path):
    """A package written to a stream that cannot seek: sizes and CRCs in data descriptors after
    each entry's data, one entry stored and one deflated (what streaming writers make)."""

    class Unseekable(io.RawIOBase):
        def __init__(self):
            self.data = bytearray()

        def writable(self):
            return True

        def write(self, b):
            self.data += b
            return len(b)

    stream = Unseekable()
    with zipfile.ZipFile(stream, "w") as archive:
        with archive.open(zipfile.ZipInfo("mimetype"), "w") as entry:
            entry.write(b"application/epub+zip")
        info = zipfile.ZipInfo("content.xml")
        info.compress_type = zipfile.ZIP_DEFLATED
        with archive.open(info, "w") as entry:
            entry.write(b"<?xml version=\"1.0\"?><a><b>text</b> <b>more text</b></a>")
    with open(path, "wb") as out:
        out.write(stream.data)


MAKERS = [
    ("simple.docx", make_simple_docx),
    ("simple.odt", make_simple_odt),
    ("small.docx", make_small_docx),
    ("streamed.zip", make_streamed_zip),
]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "office")
    os.makedirs(out_dir, exist_ok=True)
    for name, maker in MAKERS:
        maker(os.path.join(out_dir, name))
        print(os.path.join(out_dir, name))


if __name__ == "__main__":
    main()
