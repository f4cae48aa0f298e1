"""LaTeX sources: sections, numbered equations with their LaTeX, tables, lists, \\input."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.ingest import parse_file

SETTINGS = IngestSettings(min_block_chars=0)
SHARED = next(
    (
        p / "shared" / "data"
        for p in Path(__file__).resolve().parents
        if (p / "shared/data").is_dir()
    ),
    Path("/nonexistent"),
)

MAIN = r"""\documentclass{article}
\title{Learning to Cite \emph{Well}}
\author{Ada Lovelace \and Alan Turing\thanks{Equal contribution.}}
\date{March 3, 2021}
\begin{document}
\maketitle
\begin{abstract}
We show that citations can be checked. % a comment that must vanish
\end{abstract}
\section{Introduction}\label{sec:intro}
Citing is hard~\cite{smith2020}. We use the loss in Eq.~\eqref{eq:loss} and
Table~\ref{tab:res}, see Section~\ref{sec:method}.

A second paragraph with inline math $a^2 + b^2 = c^2$ and \textbf{bold} text\footnote{A note.}.
\input{method}
\end{document}
"""

METHOD = r"""\section{Method}\label{sec:method}
\subsection{Loss}
\begin{equation}\label{eq:loss}
  L(w) = \sum_{i=1}^{n} \ell(x_i, y_i; w) + \lambda \|w\|^2
\end{equation}
\begin{equation*}
  a = b
\end{equation*}
\begin{align}
  x &= 1 \\
  y &= 2 \nonumber
\end{align}
\begin{itemize}
  \item first step
  \item second step
  \begin{enumerate}
    \item nested one
  \end{enumerate}
\end{itemize}
\begin{table}[t]
\centering
\caption{Results on the test set.}\label{tab:res}
\begin{tabular}{l|rr}
\toprule
Model & F1 & Acc \\
\midrule
A & 0.91 & 93.4 \\
\multicolumn{2}{c}{B} & 88.0 \\
\bottomrule
\end{tabular}
\end{table}
\begin{thebibliography}{9}
\bibitem{smith2020} J. Smith. A paper about citations. 2020.
\end{thebibliography}
"""


def test_latex_document(tmp_path: Path) -> None:
    (tmp_path / "main.tex").write_text(MAIN, encoding="utf-8")
    (tmp_path / "method.tex").write_text(METHOD, encoding="utf-8")
    doc = parse_file(tmp_path / "main.tex", SETTINGS)
    s = doc.source
    assert s.kind == "tex" and s.title == "Learning to Cite Well"
    assert s.authors == ("Ada Lovelace", "Alan Turing") and s.published_at == "2021-03-03"
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads == ["Abstract", "1 Introduction", "2 Method", "2.1 Loss", "References"]
    text = "\n".join(b.text for b in doc.blocks)
    assert "comment" not in text and "\\textbf" not in text
    intro = next(b for b in doc.blocks if b.text.startswith("Citing is hard"))
    assert intro.text == (
        "Citing is hard [smith2020]. We use the loss in Eq. (1) and Table 1, see Section 2."
    )
    assert intro.section_path == ("1 Introduction",)
    assert any(
        b.text.startswith("A second paragraph with inline math $a^2 + b^2 = c^2$ and bold")
        for b in doc.blocks
    )
    assert any(b.kind == "footnote" and b.text == "A note." for b in doc.blocks)
    formulas = [b for b in doc.blocks if b.kind == "formula"]
    assert [f.formula_number for f in formulas] == ["1", None, "2"]
    assert formulas[0].latex == r"L(w) = \sum_{i=1}^{n} \ell(x_i, y_i; w) + \lambda \|w\|^2"
    assert formulas[0].section_path == ("2 Method", "2.1 Loss")
    lst = next(b for b in doc.blocks if b.kind == "list")
    assert lst.text == "- first step\n- second step\n  - nested one"
    table = next(b for b in doc.blocks if b.kind == "table")
    assert table.table is not None and table.table.caption == "Table 1: Results on the test set."
    assert table.table.header == (("Model", "F1", "Acc"),)
    assert table.table.rows == (("A", "0.91", "93.4"), ("B", "", "88.0"))
    refs = [b for b in doc.blocks if b.kind == "reference"]
    assert [r.text for r in refs] == ["J. Smith. A paper about citations. 2020."]


def test_input_outside_the_folder_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.tex").write_text("TOP SECRET TEXT", encoding="utf-8")
    sub = tmp_path / "paper"
    sub.mkdir()
    (sub / "main.tex").write_text("Hello world paragraph.\n\n\\input{../secret}\n", "utf-8")
    doc = parse_file(sub / "main.tex", SETTINGS)
    assert "SECRET" not in "\n".join(b.text for b in doc.blocks)


@pytest.mark.shared
def test_ucas_thesis_chapter_sources() -> None:
    folder = SHARED / "sci-pdfs" / "groundtruth" / "ucasthesis-tex"
    if not folder.is_dir():
        pytest.skip(f"shared data not present: {folder}")
    doc = parse_file(folder / "Chap_Guide.tex", SETTINGS)
    assert doc.source.lang == "zh"
    heads = [b.text for b in doc.blocks if b.kind == "heading"]
    assert heads[0] == "第1章 LaTeX使用说明" and "1.1 先试试效果" in heads
    assert any(b.kind == "list" for b in doc.blocks)
    assert any(b.kind == "formula" and b.formula_number for b in doc.blocks)
    assert any(b.kind == "table" and b.table and b.table.caption for b in doc.blocks)
