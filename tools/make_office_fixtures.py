#!/usr/bin/python3
"""Makes the small office documents under tests/data/office/ that the C++ tests and the fuzz
targets' seed corpora read, with libraries and programs nobody here wrote (python3-docx,
python3-odf; LibreOffice, soffice --headless --convert-to, for what they cannot write: a DOCX
footnote, a presentation: no PPTX writer is packaged for Python in Debian 12).

targets' seed corpora read, with libraries and tools nobody here wrote (python3-docx,
python3-odf, pandoc).

Usage: tools/make_office_fixtures.py [OUT_DIR [FILE...]]   (default: tests/data/office, every
file; Debian's python3, where the python3-docx and python3-odf packages are)

One maker per file, listed in MAKERS: add a document by adding a function and a line there.
OpenDocument's translation tests read make_report_odt's report.odt (a heading, paragraphs with
bold, italic and linked words and a tab, a list, a table, an image frame, a footnote, a comment,
a header, a footer with a page number field, a title) and make_slides_odp's slides.odp (two
slides with titles and text boxes, speaker notes).
"""
import io
import os
import shutil

import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib

import docx
from docx.shared import Pt
from odf import dc, draw, office, opendocument, presentation, style, table, text
from odf.namespaces import PRESENTATIONNS
from odf.opendocument import OpenDocumentPresentation, OpenDocumentText


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


# --- The DOCX and PPTX formats' documents (python3-docx, LibreOffice) ----------------------

def png(width, height, rgb):
    """A PNG of one colour, written by hand (no imaging library needed)."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    row = b"\x00" + bytes(rgb) * width
    return (b"\x89PNG\r\n\x1a\n" +
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


def hyperlink(paragraph, url, text):
    """A w:hyperlink to `url` around a run of `text` styled as a link (python-docx has no call
    for it: built from its OXML helpers)."""
    from docx.opc.constants import RELATIONSHIP_TYPE
    from docx.oxml.shared import OxmlElement, qn
    r_id = paragraph.part.relate_to(url, RELATIONSHIP_TYPE.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), r_id)
    run = OxmlElement("w:r")
    properties = OxmlElement("w:rPr")
    colour = OxmlElement("w:color")
    colour.set(qn("w:val"), "0563C1")
    underline = OxmlElement("w:u")
    underline.set(qn("w:val"), "single")
    properties.append(colour)
    properties.append(underline)
    run.append(properties)
    t = OxmlElement("w:t")
    t.text = text
    run.append(t)
    link.append(run)
    paragraph._p.append(link)


def _split_like_word(paragraph, pieces):
    """Runs of the same formatting split as Word splits them: each with its revision id, a
    proofing mark between two of them."""
    from docx.oxml.shared import OxmlElement, qn
    for i, piece in enumerate(pieces):
        run = paragraph.add_run(piece)
        run._r.set(qn("w:rsidR"), "00A%d1B2C" % i)
        run._r.set(qn("w:rsidRPr"), "00F%d3D4E" % i)
        if i == 1:
            mark = OxmlElement("w:proofErr")
            mark.set(qn("w:type"), "spellStart")
            run._r.addprevious(mark)
        if i == 2:
            mark = OxmlElement("w:proofErr")
            mark.set(qn("w:type"), "spellEnd")
            run._r.addprevious(mark)


def make_formatted_docx(path):
    """formatted.docx: plain paragraphs, bold, italic, underlined and coloured words, a
    hyperlink, a paragraph split into many runs of one formatting, a table, an image, a header
    and a footer."""
    import docx
    from docx.shared import Pt, RGBColor
    document = docx.Document()
    document.sections[0].header.paragraphs[0].text = "The annual report of the club."
    document.sections[0].footer.paragraphs[0].text = "A footer under every page."
    document.add_heading("A day in the park", level=1)
    document.add_paragraph("A man is riding a bike.")
    p = document.add_paragraph("The ")
    p.add_run("dog").bold = True
    p.add_run(" runs in the park.")
    p = document.add_paragraph("A ")
    p.add_run("small").italic = True
    p.add_run(" cat sleeps on the ")
    p.add_run("red").underline = True
    p.add_run(" sofa.")
    p = document.add_paragraph("Two children play with a ")
    ball = p.add_run("ball")
    ball.font.color.rgb = RGBColor(0xC0, 0x00, 0x00)
    ball.font.size = Pt(14)
    p.add_run(".")
    p = document.add_paragraph("A boy is playing near the ")
    hyperlink(p, "https://example.com/", "big house")
    p.add_run(".")
    _split_like_word(document.add_paragraph(),
                     ["Two dogs ", "are play", "ing in ", "the snow", "."])
    table = document.add_table(rows=2, cols=2)
    for row, texts in zip(table.rows, [["A woman is reading.", "A boy is swimming."],
                                       ["The sun is shining.", "A bird sings."]]):
        for cell, text in zip(row.cells, texts):
            cell.text = text
    image = os.path.join(tempfile.mkdtemp(), "square.png")
    with open(image, "wb") as f:
        f.write(png(8, 8, (30, 120, 200)))
    document.add_picture(image)
    shutil.rmtree(os.path.dirname(image))
    document.add_paragraph("A woman is walking on the beach.")
    document.save(path)


_FOOTNOTE_FODT = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2"
 office:mimetype="application/vnd.oasis.opendocument.text">
 <office:body><office:text>
  <text:p>A man is riding a bike<text:note text:id="n1" text:note-class="footnote">
   <text:note-citation>1</text:note-citation>
   <text:note-body><text:p>The bike is red.</text:p></text:note-body></text:note>.</text:p>
  <text:p>Two dogs are playing in the snow.</text:p>
 </office:text></office:body>
</office:document>
"""


def make_footnote_docx(path):
    """footnote.docx: a paragraph with a footnote (python-docx cannot write one: a flat ODT
    converted by LibreOffice)."""
    _convert("footnote.fodt", _FOOTNOTE_FODT, "docx", path)


# --- PPTX (LibreOffice Impress: no PPTX writer is packaged for Python in Debian 12) -----------

_SLIDES_FODP = """<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"
 xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"
 xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"
 xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
 xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"
 xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
 xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
 xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
 xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.2"
 office:mimetype="application/vnd.oasis.opendocument.presentation">
 <office:automatic-styles>
  <style:style style:name="B" style:family="text"><style:text-properties fo:font-weight="bold"/></style:style>
 </office:automatic-styles>
 <office:body><office:presentation>
  <draw:page draw:name="one">
   <draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="3cm">
    <draw:text-box><text:p>A day in the park</text:p></draw:text-box></draw:frame>
   <draw:frame svg:x="2cm" svg:y="6cm" svg:width="20cm" svg:height="8cm">
    <draw:text-box>
     <text:p>A man is riding a bike.</text:p>
     <text:p>The <text:span text:style-name="B">dog</text:span> runs in the park.</text:p>
     <text:p>Please visit <text:a xlink:href="https://example.com/">our website</text:a> today.</text:p>
    </draw:text-box></draw:frame>
   <presentation:notes><draw:frame presentation:class="notes" svg:x="2cm" svg:y="14cm"
     svg:width="17cm" svg:height="10cm"><draw:text-box>
     <text:p>Two dogs are playing in the snow.</text:p></draw:text-box></draw:frame>
   </presentation:notes>
  </draw:page>
  <draw:page draw:name="two">
   <draw:frame svg:x="2cm" svg:y="2cm" svg:width="20cm" svg:height="6cm"><table:table>
    <table:table-column/><table:table-column/>
    <table:table-row><table:table-cell><text:p>A woman is reading.</text:p></table:table-cell>
     <table:table-cell><text:p>A boy is swimming.</text:p></table:table-cell></table:table-row>
   </table:table></draw:frame>
  </draw:page>
 </office:presentation></office:body>
</office:document>
"""


def _convert(source_name, source_text, target, path):
    """`source_text` saved as `source_name`, converted to `target` by LibreOffice into `path`."""
    work = tempfile.mkdtemp()
    try:
        source = os.path.join(work, source_name)
        with open(source, "w", encoding="utf-8") as f:
            f.write(source_text)
        subprocess.run(["soffice", "--headless", "-env:UserInstallation=file://" + work + "/profile",
                        "--convert-to", target, "--outdir", work, source],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        made = os.path.splitext(source_name)[0] + "." + target
        shutil.copy(os.path.join(work, made), path)
    finally:
        shutil.rmtree(work)


def make_slides_pptx(path):
    """slides.pptx: a title, plain, bold and linked words, notes, and a table on a second slide
    (a flat ODP converted by LibreOffice)."""
    _convert("slides.fodp", _SLIDES_FODP, "pptx", path)

EPUB_MARKDOWN = """\
---
title: A Small Book
description: A short book about a cat and a dog.
lang: en
---

# The First Chapter

The cat sat on the mat. It was a *very* happy cat.

Read more on [the website](https://example.com) today.

![A red square](square.png)

| Name | Colour |
|------|--------|
| Apple | Red |
| Pear | Green |

# The Second Chapter

The dog ran in the **green** park.

The weather was warm.
"""


def _pandoc_epub(path, target):
    """EPUB_MARKDOWN (headings, emphasis, a link, an image, a table) made an EPUB by pandoc."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "book.md"), "w") as out:
            out.write(EPUB_MARKDOWN)
        with open(os.path.join(tmp, "square.png"), "wb") as out:
            out.write(png(4, 4, (255, 0, 0)))
        subprocess.run(["pandoc", "--to", target, "-o", os.path.abspath(path), "book.md"],
                       cwd=tmp, check=True)


def make_book3_epub(path):
    """An EPUB 3 by pandoc, with its navigation document nav.xhtml (and an NCX)."""
    _pandoc_epub(path, "epub3")


def make_book2_epub(path):
    """An EPUB 2 by pandoc, with its table of contents toc.ncx."""
    _pandoc_epub(path, "epub2")


EPUB_XHTML_CASES = {
    "empty-element-tags": '<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml" '
                          'xml:lang="en"><head><title/><script src="a.js"/></head><body><p>One '
                          '<span id="s"/>two<br/>three <a id="x"/>four.</p><div/></body></html>',
    "cdata": '<html><body><p>Fish <![CDATA[& chips > <b>]]> today.</p><script><![CDATA[ a < b '
             ']]></script></body></html>',
    "html-reads-otherwise": '<html><head><title>A <b>bold</b> title</title></head><body><div>'
                            '<span>Left <div>inner</div> after</span></div><p><a href="1">outer '
                            '<a href="2">inner</a> tail</a></p></body></html>',
}


def make_epub_seeds(out_dir):
    """The epub_document fuzz target's seeds (tests/fuzz/corpus/epub_document/: a package
    document, a NUL, an XHTML document) from the books' parts, and a few of XHTML's cases the
    HTML parser reads otherwise."""
    corpus = os.path.join(out_dir, "..", "..", "fuzz", "corpus", "epub_document")
    os.makedirs(corpus, exist_ok=True)
    for book in ("book3.epub", "book2.epub"):
        with zipfile.ZipFile(os.path.join(out_dir, book)) as z:
            opf = z.read("EPUB/content.opf")
            for name in z.namelist():
                if name.endswith((".xhtml", ".ncx")):
                    seed = os.path.join(corpus, book[:-5] + "-" + name.rsplit("/", 1)[1])
                    with open(seed, "wb") as out:
                        out.write(opf + b"\0" + z.read(name))
            with open(os.path.join(corpus, book[:-5] + "-container"), "wb") as out:
                out.write(z.read("META-INF/container.xml") + b"\0" + z.read("EPUB/nav.xhtml"))
    for name, xhtml in EPUB_XHTML_CASES.items():
        with open(os.path.join(corpus, name), "wb") as out:
            out.write(xhtml.encode())
    print(corpus)


# --- OpenDocument translation documents (python3-odf) ------------------------------------

def make_report_odt(path):
    doc = OpenDocumentText()
    doc.meta.addElement(dc.Title(text="A short report"))
    # The document's language, as word processors write it: the default paragraph style's.
    default = style.DefaultStyle(family="paragraph")
    default.addElement(style.TextProperties(language="en", country="US"))
    doc.styles.addElement(default)
    bold = style.Style(name="Bold", family="text")
    bold.addElement(style.TextProperties(fontweight="bold"))
    italic = style.Style(name="Italic", family="text")
    italic.addElement(style.TextProperties(fontstyle="italic"))
    for s in (bold, italic):
        doc.automaticstyles.addElement(s)
    h1 = style.Style(name="Heading 1", family="paragraph")
    h1.addElement(style.TextProperties(fontsize="18pt", fontweight="bold"))
    doc.styles.addElement(h1)

    # A header and a footer on the standard master page (styles.xml).
    layout = style.PageLayout(name="Page")
    doc.automaticstyles.addElement(layout)
    master = style.MasterPage(name="Standard", pagelayoutname=layout)
    header = style.Header()
    header.addElement(text.P(text="The header of the report."))
    master.addElement(header)
    footer = style.Footer()
    p = text.P(text="The footer of the report, page ")
    p.addElement(text.PageNumber(selectpage="current", text="1"))
    p.addText(".")
    footer.addElement(p)
    master.addElement(footer)
    doc.masterstyles.addElement(master)

    body = doc.text
    body.addElement(text.H(outlinelevel=1, stylename=h1, text="The weather"))
    body.addElement(text.P(text="The sun is shining. The birds are singing."))
    p = text.P(text="Weather:")
    p.addElement(text.Tab())
    p.addText("sunny and warm")
    body.addElement(p)
    p = text.P(text="A man is riding a ")
    p.addElement(text.Span(stylename=bold, text="red"))
    p.addElement(text.Span(text=" bike in the "))
    p.addElement(text.Span(stylename=italic, text="park"))
    p.addText(".")
    body.addElement(p)
    p = text.P(text="Read the ")
    p.addElement(text.A(href="https://example.org/news", type="simple", text="news"))
    p.addText(" today.")
    body.addElement(p)

    items = text.List()
    for line in ("A dog is running.", "A cat is sleeping."):
        item = text.ListItem()
        item.addElement(text.P(text=line))
        items.addElement(item)
    body.addElement(items)

    grid = table.Table(name="Animals")
    grid.addElement(table.TableColumn(numbercolumnsrepeated=2))
    for row_text in (("The dog", "The cat"), ("A horse", "A bird")):
        row = table.TableRow()
        for cell_text in row_text:
            cell = table.TableCell()
            cell.addElement(text.P(text=cell_text))
            row.addElement(cell)
        grid.addElement(row)
    body.addElement(grid)

    picture = doc.addPicture("Pictures/red.png", "image/png", png(2, 2, (255, 0, 0)))
    p = text.P(text="A picture of a house.")
    frame = draw.Frame(name="Picture", anchortype="as-char", width="1cm", height="1cm")
    frame.addElement(draw.Image(href=picture))
    p.addElement(frame)
    body.addElement(p)

    p = text.P(text="Two children are playing")
    note = text.Note(id="ftn1", noteclass="footnote")
    note.addElement(text.NoteCitation(text="1"))
    note_body = text.NoteBody()
    note_body.addElement(text.P(text="They are playing football."))
    note.addElement(note_body)
    p.addElement(note)
    p.addText(" on the grass.")
    body.addElement(p)

    # A comment: kept as written, its text reported untranslated.
    p = text.P(text="The day ends.")
    comment = office.Annotation()
    comment.addElement(text.P(text="Check this sentence."))
    p.addElement(comment)
    body.addElement(p)
    doc.save(path)


def make_slides_odp(path):
    doc = OpenDocumentPresentation()
    doc.meta.addElement(dc.Title(text="Two slides"))
    layout = style.PageLayout(name="Slides")
    layout.addElement(style.PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    doc.automaticstyles.addElement(layout)
    master = style.MasterPage(name="Default", pagelayoutname=layout)
    doc.masterstyles.addElement(master)
    box_style = style.Style(name="Box", family="graphic")
    box_style.addElement(style.TextProperties(language="en", country="GB"))
    doc.automaticstyles.addElement(box_style)
    bold = style.Style(name="Bold", family="text")
    bold.addElement(style.TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)

    slides = (
        ("The first slide", ("A woman is reading a book.", "The book is new.")),
        ("The second slide", ("A boy is playing ball.",)),
    )
    for n, (title, lines) in enumerate(slides):
        page = draw.Page(name="page%d" % (n + 1), masterpagename=master)
        frame = draw.Frame(stylename=box_style, width="24cm", height="3cm", x="2cm", y="1cm")
        frame.setAttrNS(PRESENTATIONNS, "class", "title")
        box = draw.TextBox()
        box.addElement(text.P(text=title))
        frame.addElement(box)
        page.addElement(frame)
        frame = draw.Frame(stylename=box_style, width="24cm", height="12cm", x="2cm", y="5cm")
        box = draw.TextBox()
        for i, line in enumerate(lines):
            p = text.P()
            if i == 0:  # The second word bold.
                first, second, rest = line.split(" ", 2)
                p.addText(first + " ")
                p.addElement(text.Span(stylename=bold, text=second))
                p.addText(" " + rest)
            else:
                p.addText(line)
            box.addElement(p)
        frame.addElement(box)
        page.addElement(frame)
        notes = presentation.Notes()
        frame = draw.Frame(width="20cm", height="10cm", x="2cm", y="14cm")
        frame.setAttrNS(PRESENTATIONNS, "class", "notes")
        box = draw.TextBox()
        box.addElement(text.P(text="Say this slowly."))
        frame.addElement(box)
        notes.addElement(frame)
        page.addElement(notes)
        doc.presentation.addElement(page)
    doc.save(path)


MAKERS = [
    ("simple.docx", make_simple_docx),
    ("simple.odt", make_simple_odt),
    ("report.odt", make_report_odt),
    ("slides.odp", make_slides_odp),
    ("small.docx", make_small_docx),
    ("streamed.zip", make_streamed_zip),
    ("formatted.docx", make_formatted_docx),
    ("footnote.docx", make_footnote_docx),
    ("slides.pptx", make_slides_pptx),
    ("book3.epub", make_book3_epub),
    ("book2.epub", make_book2_epub),
]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "office")
    names = sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    for name, maker in MAKERS:
        if names and name not in names:
            continue
        maker(os.path.join(out_dir, name))
        print(os.path.join(out_dir, name))
    if (not names or "book3.epub" in names or "book2.epub" in names) and os.path.isdir(
            os.path.join(out_dir, "..", "..", "fuzz")):
        make_epub_seeds(out_dir)


if __name__ == "__main__":
    main()
