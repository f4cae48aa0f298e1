"""Generators for small test PDFs (reportlab, BSD; a test-time dependency only).

Each function writes one PDF and returns its path. Run as a script to write them all to a folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

W, H = A4
DEJAVU = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")

LEFT_COL = [
    "The left column opens the paper with a claim",
    "about layout analysis that ends right here.",
    "A second left paragraph talks about readers",
    "in journals with narrow gutters between text.",
]
RIGHT_COL = [
    "The right column starts here and must come",
    "after the whole left column has been read.",
    "Another right paragraph closes the page with",
    "a remark about numbers in the page margins.",
]


def _canvas(path: Path, **kw: object) -> Canvas:
    c = Canvas(str(path), pagesize=A4, **kw)  # type: ignore[arg-type]
    c.setTitle("")
    return c


def two_column(path: Path, pages: int = 3) -> Path:
    """Two columns, a running header, page numbers, a full-width title on page 1."""
    c = _canvas(path)
    col_w, gutter, margin = 240.0, 20.0, 50.0
    for n in range(1, pages + 1):
        c.setFont("Helvetica", 8)
        c.drawString(margin, H - 30, "Journal of Layout Tests, Vol. 7")
        c.drawCentredString(W / 2, 30, str(n))
        y = H - 100
        if n == 1:
            c.setFont("Helvetica-Bold", 18)
            c.drawCentredString(W / 2, y, "A Study of Two Column Reading Order")
            y -= 40
        for col, lines in ((0, LEFT_COL), (1, RIGHT_COL)):
            x = margin + col * (col_w + gutter)
            yy = y
            c.setFont("Helvetica-Bold", 12)
            c.drawString(x, yy, f"{n}.{col + 1} {'Left' if col == 0 else 'Right'} Section")
            yy -= 20
            c.setFont("Helvetica", 9)
            for rep in range(3):
                for i, line in enumerate(lines):
                    text = line if i % 2 else f"P{n}.{rep} {line}"
                    c.drawString(x, yy, text)
                    yy -= 11
                    if i % 2 == 1:
                        yy -= 8
        c.showPage()
    c.save()
    return path


def hyphen_ligature(path: Path) -> Path:
    """Line-end hyphenation, a compound hyphen and ligature glyphs (needs DejaVu Sans)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    font = "Helvetica"
    if DEJAVU.exists():
        pdfmetrics.registerFont(TTFont("DejaVu", str(DEJAVU)))
        font = "DejaVu"
    c = _canvas(path)
    c.setFont(font, 11)
    lines = [
        "We gathered the infor-",
        "mation from many sources and wrote a state-of-the-",
        "art system that is robust to noisy input text.",
        "",
        "The second paragraph uses ligatures: we \ufb01nd the \ufb02ow of",
        "e\ufb00ort and the o\ufb03ce of the sta\ufb04 in this document.",
    ]
    y = H - 80
    for line in lines:
        if line:
            c.drawString(60, y, line)
        y -= 30 if not line else 15
    c.save()
    return path


def ruled_table(path: Path) -> Path:
    """A fully ruled 3×4 table with a caption above it."""
    c = _canvas(path)
    c.setFont("Helvetica", 10)
    c.drawString(60, H - 80, "This page holds a table of results for three models on a benchmark.")
    c.drawString(60, H - 120, "Table 1: Accuracy of the models.")
    rows = [
        ["Model", "Accuracy", "F1", "Params"],
        ["Alpha", "91.2", "88.0", "110M"],
        ["Beta", "89.5", "86.1", "340M"],
        ["Gamma", "93.4", "90.7", "1.3B"],
    ]
    x0, top, cw, rh = 60.0, H - 135, 100.0, 20.0
    for i in range(len(rows) + 1):
        c.line(x0, top - i * rh, x0 + cw * 4, top - i * rh)
    for j in range(5):
        c.line(x0 + j * cw, top, x0 + j * cw, top - rh * len(rows))
    for i, row in enumerate(rows):
        for j, cell in enumerate(row):
            c.drawString(x0 + j * cw + 5, top - (i + 1) * rh + 6, cell)
    c.drawString(60, top - rh * len(rows) - 40, "The text after the table discusses the results.")
    c.save()
    return path


def ruled_grid(path: Path) -> Path:
    """A grid drawn as one path of cell boxes, no caption; one cell wraps over two lines and
    one cell border has no padding gap before the next cell's text."""
    c = _canvas(path)
    c.setFont("Helvetica", 10)
    c.drawString(60, H - 80, "Some text above a grid that has no caption at all, on purpose.")
    x0, top, cw, rh = 60.0, H - 110, 110.0, 30.0
    p = c.beginPath()
    for i in range(3):
        for j in range(3):
            p.rect(x0 + j * cw, top - (i + 1) * rh, cw, rh)
    c.drawPath(p, stroke=1, fill=0)
    cells = [["Region", "Revenue", "Note"], ["North", "4.1", "grew in"], ["South", "3.7", "flat"]]
    for i, row in enumerate(cells):
        for j, cell in enumerate(row):
            c.drawString(x0 + j * cw + 4, top - i * rh - 12, cell)
    c.drawString(x0 + 2 * cw + 4, top - rh - 24, "the spring")
    c.drawString(
        60, top - 3 * rh - 40, "The text after the grid closes this page of the test file."
    )
    c.save()
    return path


def number_table(path: Path) -> Path:
    """A financial table with no rules and no caption: a header of years, number rows and a
    section row, between two paragraphs."""
    c = _canvas(path)
    c.setFont("Helvetica", 10)
    c.drawString(60, H - 80, "The opening paragraph of this report describes the forecast below.")
    rows = [
        ("Indicator", "2021", "2022E", "2023E"),
        ("Revenue (m)", "1,567", "3,684", "5,056"),
        ("Growth", "110.0%", "135.1%", "37.2%"),
        ("Margins", "", "", ""),
        ("Gross margin", "33.7%", "35.0%", "36.0%"),
        ("Net margin", "11.0%", "12.8%", "14.2%"),
    ]
    y = H - 110
    for row in rows:
        c.drawString(60, y, row[0])
        for k, cell in enumerate(row[1:]):
            c.drawRightString(260 + 70 * k, y, cell)
        y -= 14
    c.drawString(60, y - 20, "The closing paragraph of this report comes after the table.")
    c.save()
    return path


def formula_scripts(path: Path) -> Path:
    """Display formulas set with raised/lowered smaller glyphs, a sum with limits and a
    fraction (numerator over denominator), between two paragraphs."""
    c = _canvas(path)
    c.setFont("Helvetica", 10)
    c.drawString(
        60, H - 80, "The identity below relates the sides of a right triangle to each other."
    )

    def put(x: float, y: float, text: str, size: float = 14, font: str = "Times-Italic") -> float:
        c.setFont(font, size)
        c.drawString(x, y, text)
        return x + c.stringWidth(text, font, size)

    y = H - 130
    x = put(220, y, "a")
    x = put(x + 1, y + 6, "2", 9, "Times-Roman")
    x = put(x + 4, y, "+", 14, "Times-Roman")
    x = put(x + 4, y, "b")
    x = put(x + 1, y + 6, "2", 9, "Times-Roman")
    x = put(x + 4, y, "=", 14, "Times-Roman")
    x = put(x + 4, y, "c")
    put(x + 1, y + 6, "2", 9, "Times-Roman")
    y = H - 200
    x = put(220, y, "x", 14)
    x = put(x + 4, y, "=", 14, "Times-Roman")
    put(x + 6, y + 9, "p", 14)
    c.line(x + 4, y + 4, x + 16, y + 4)
    put(x + 6, y - 10, "q", 14)
    c.setFont("Helvetica", 10)
    c.drawString(
        60, H - 250, "The text after the formulas explains what the symbols stand for here."
    )
    c.save()
    return path


def formula(path: Path) -> Path:
    """A paragraph, a centred numbered display equation, and another paragraph."""
    c = _canvas(path)
    c.setFont("Helvetica", 10)
    c.drawString(60, H - 80, "The loss of the model is defined by the equation below, where")
    c.drawString(60, H - 93, "x is the input and w the weight vector of the linear layer.")
    c.drawCentredString(W / 2, H - 130, "L(w) = || y - w x ||^2 + lambda * || w ||^2")
    c.drawRightString(W - 60, H - 130, "(1)")
    c.drawString(60, H - 165, "We minimise this loss with gradient descent for ten epochs.")
    c.save()
    return path


def references(path: Path) -> Path:
    """A body paragraph with [n] citations and a References section with numbered entries."""
    c = _canvas(path)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(60, H - 70, "1 Introduction")
    c.setFont("Helvetica", 10)
    c.drawString(60, H - 95, "Prior work on parsing [1] and on retrieval [2, 3] motivates this,")
    c.drawString(60, H - 108, "while Smith et al. (2020) describe a related pipeline in detail.")
    c.setFont("Helvetica-Bold", 14)
    c.drawString(60, H - 150, "References")
    c.setFont("Helvetica", 9)
    refs = [
        [
            "[1] A. Smith, B. Jones, and C. Lee. 2020. Parsing documents at scale. In",
            "Proceedings of the Conference on Documents, pages 1-10.",
        ],
        ["[2] D. Brown. 2019. Dense retrieval for everyone. Journal of Retrieval, 12(3)."],
        [
            "[3] E. Green and F. White. 2021. Sparse retrieval strikes back. In Proceedings",
            "of the Workshop on Search, pages 20-30.",
        ],
    ]
    y = H - 172
    for entry in refs:
        for k, line in enumerate(entry):
            c.drawString(60 if k == 0 else 72, y, line)
            y -= 12
    c.save()
    return path


def chinese(path: Path) -> Path:
    """Chinese headings and a paragraph broken over lines (Adobe STSong-Light CID font)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    c = _canvas(path)
    c.setFont("STSong-Light", 16)
    c.drawString(60, H - 80, "第一章 引言")
    c.setFont("STSong-Light", 10)
    lines = [
        "知识图谱是一种用图结构表示知识的方法，它由实体和关系组成。",
        "本文研究如何从科学论文中自动抽取实体，并构建大规模的知识图谱。",
        "实验表明，我们的方法在三个数据集上都取得了最好的结果。",
    ]
    y = H - 110
    for line in lines:
        c.drawString(60, y, line)
        y -= 14
    c.setFont("STSong-Light", 14)
    c.drawString(60, y - 20, "第二章 方法")
    c.setFont("STSong-Light", 10)
    c.drawString(60, y - 45, "我们首先对文本进行分词，然后使用神经网络模型识别实体和关系。")
    c.save()
    return path


def encrypted(path: Path, password: str = "secret") -> Path:
    """An RC4-encrypted PDF that needs a user password."""
    from reportlab.lib.pdfencrypt import StandardEncryption

    enc = StandardEncryption(password, ownerPassword="owner", strength=128)
    c = _canvas(path, encrypt=enc)
    c.setFont("Helvetica", 11)
    c.drawString(60, H - 80, "This confidential text is only readable with the password.")
    c.save()
    return path


def truncated(path: Path) -> Path:
    """A valid PDF cut to 60 % of its bytes."""
    two_column(path, pages=2)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.6)])
    return path


def not_a_pdf(path: Path) -> Path:
    """A text file with a .pdf name."""
    path.write_text("this is just text, not a PDF\n", encoding="utf-8")
    return path


def image_only(path: Path, pages: int = 3) -> Path:
    """Pages that hold only a picture (a scan without a text layer)."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader

    img = Image.new("L", (400, 500), 255)
    draw = ImageDraw.Draw(img)
    for i in range(0, 500, 12):
        draw.line((20, i, 380, i), fill=40, width=3)
    c = _canvas(path)
    for _ in range(pages):
        c.drawImage(ImageReader(img), 50, 200, width=400, height=500)
        c.showPage()
    c.save()
    return path


def front_matter(path: Path) -> Path:
    """A paper's first page (title, author and affiliation lines bigger than the body text,
    a vector figure with small labels, a one-off conference footer) and a lettered appendix."""
    c = _canvas(path)
    body = [
        "The body text of this paper is set in ten point type and it fills the column",
        "from the left margin to the right margin, line after line, like a paper does.",
        "It goes on for a few lines so that the most common font size is the body one,",
        "and the bigger author lines above the abstract stand out as if they were heads.",
    ]

    count = [0]

    def para(y: float) -> float:
        c.setFont("Helvetica", 10)
        count[0] += 1
        for k, line in enumerate(body):
            c.drawString(60, y, f"({count[0]}) {line}" if k == 0 else line)
            y -= 13
        return y - 12

    c.setFont("Helvetica-Bold", 16)
    c.drawCentredString(W / 2, H - 70, "Learning Front Matter Layouts")
    c.setFont("Helvetica", 12)
    c.drawCentredString(W / 2, H - 100, "Ada Lovelace\u2020 Alan Turing\u2021")
    c.drawCentredString(W / 2, H - 122, "\u2020Institute for Analytical Engines")
    c.drawCentredString(W / 2, H - 144, "\u2021University of Computing Machinery")
    c.setFont("Helvetica-Bold", 12)
    c.drawString(60, H - 175, "Abstract")
    y = para(H - 195)
    c.setFont("Helvetica-Bold", 12)
    c.drawString(60, y, "1 Introduction")
    y = para(y - 20)
    # a figure: boxes with small labels, then its caption
    c.rect(150, y - 90, 90, 40)
    c.rect(330, y - 90, 90, 40)
    c.line(240, y - 70, 330, y - 70)
    c.setFont("Helvetica", 7)
    c.drawString(160, y - 75, "Encoder block")
    c.drawString(340, y - 75, "Decoder block")
    c.drawString(255, y - 65, "hidden state")
    c.setFont("Helvetica-Bold", 12)
    c.drawString(200, y - 40, "Query paper")
    c.setFont("Helvetica", 9)
    c.drawString(150, y - 110, "Figure 1: The encoder and the decoder of the model.")
    y = para(y - 140)
    c.setFont("Helvetica", 8)
    c.drawCentredString(W / 2, 40, "Proceedings of the Test Conference 2024, pages 1\u20132")
    c.drawCentredString(W / 2, 30, "\u00a9 2024 Association for Testing")
    c.showPage()
    heads = [("A Appendix", 12), ("A.1 Training Details", 11), ("B More Results", 12)]
    y = H - 70
    for text, size in heads:
        c.setFont("Helvetica-Bold", size)
        c.drawString(60, y, text)
        y = para(y - 20)
    c.save()
    return path


def identifiers(path: Path) -> Path:
    """A first page with an arXiv stamp in the margin (rotated), a DOI line and Info authors."""
    c = _canvas(path)
    c.setAuthor("Grace Hopper; Ada Lovelace")
    c.setFont("Helvetica-Bold", 16)
    c.drawCentredString(W / 2, H - 70, "Compilers for Everyone")
    c.setFont("Helvetica", 10)
    c.drawString(60, H - 110, "Published: 12 March 2021")
    c.drawString(60, H - 130, "We describe a compiler that anyone can use, in ten point type.")
    c.drawString(60, 40, "https://doi.org/10.18653/v1/2021.test-main.42")
    c.saveState()
    c.translate(30, H / 2)
    c.rotate(90)
    c.drawString(0, 0, "arXiv:2103.01234v2 [cs.PL] 14 Mar 2021")
    c.restoreState()
    c.save()
    return path


def scanned(path: Path, make: object = None, dpi: int = 200, note: str = "") -> Path:
    """A scan of a generated PDF: every page rendered to a grey image (pypdfium2) and placed
    as the page's only content, with no text layer."""
    import pypdfium2 as pdfium
    from reportlab.lib.utils import ImageReader

    src = path.with_name(path.stem + "-source.pdf")
    (make or two_column)(src)  # type: ignore[operator]
    pdf = pdfium.PdfDocument(str(src))
    c = _canvas(path)
    for i in range(len(pdf)):
        page = pdf[i]
        w, h = page.get_size()
        image = page.render(scale=dpi / 72, grayscale=True).to_pil()
        c.setPageSize((w, h))
        c.drawImage(ImageReader(image), 0, 0, width=w, height=h)
        if note:  # invisible text (render mode 3): in the text layer, not in the picture
            text = c.beginText(60, h / 2)
            text.setFont("Helvetica", 11)
            text.setTextRenderMode(3)
            text.textLine(note)
            c.drawText(text)
        c.showPage()
        page.close()
    pdf.close()
    c.save()
    src.unlink()
    return path


def scanned_chinese(path: Path) -> Path:
    """A scan of `chinese` (Chinese headings and paragraphs)."""
    return scanned(path, chinese)


def scanned_page(path: Path) -> Path:
    """A one-page scan of a two-column page."""
    return scanned(path, lambda p: two_column(p, pages=1))


def scanned_with_note(path: Path) -> Path:
    """A one-page scan with one line of invisible text over the picture (an archive's note)."""
    return scanned(path, lambda p: two_column(p, pages=1), note="Archive copy, shelf 42")


ALL = {
    "two_column": two_column,
    "hyphen_ligature": hyphen_ligature,
    "ruled_table": ruled_table,
    "ruled_grid": ruled_grid,
    "number_table": number_table,
    "formula_scripts": formula_scripts,
    "formula": formula,
    "references": references,
    "chinese": chinese,
    "encrypted": encrypted,
    "truncated": truncated,
    "not_a_pdf": not_a_pdf,
    "image_only": image_only,
    "front_matter": front_matter,
    "identifiers": identifiers,
    "scanned_two_column": scanned,
    "scanned_chinese": scanned_chinese,
    "scanned_page": scanned_page,
    "scanned_with_note": scanned_with_note,
}

if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    for name, make in ALL.items():
        print(make(out / f"{name}.pdf"))
