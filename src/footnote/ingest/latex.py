"""LaTeX sources (.tex) → raw blocks: sectioning commands become headings, display math
becomes formula blocks that keep their LaTeX and equation numbers, tabular environments become
tables, list environments lists, captions captions, `thebibliography` references.

`\\input` / `\\include` are followed within the file's folder. Inline markup is reduced to its
text (`\\emph{x}` → x); inline math stays as `$…$`; `\\ref` resolves to the number LaTeX would
print for labelled sections, equations, tables and figures. This is a reader for the common
article/report/book subset, not a TeX engine: macros defined in the document are not expanded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from footnote.ingest import metadata
from footnote.ingest.cleanup import clean_text
from footnote.ingest.metadata import Meta
from footnote.ingest.raw import Parsed, RawBlock
from footnote.textnorm import count_cjk
from footnote.types import Table

_MAX_DEPTH = 10
_MAX_BYTES = 20 * 1024 * 1024
_COMMENT = re.compile(r"(?<!\\)%.*")
_INPUT = re.compile(r"\\(?:input|include|subfile)\s*\{([^}]+)\}")
_LEVELS = {"part": 0, "chapter": 1, "section": 2, "subsection": 3, "subsubsection": 4}
_MATH_ENVS = (
    "equation",
    "align",
    "gather",
    "multline",
    "eqnarray",
    "displaymath",
    "math",
    "flalign",
)
_LIST_ENVS = ("itemize", "enumerate", "description")
_CODE_ENVS = ("lstlisting", "verbatim", "minted", "Verbatim", "alltt")
_SKIP_ENVS = ("tikzpicture", "comment", "titlepage")
_TOKEN = re.compile(
    r"\\(?P<sec>part|chapter|section|subsection|subsubsection|paragraph)(?P<star>\*?)\s*"
    r"(?:\[[^\]]*\])?\s*\{"
    r"|\\begin\s*\{(?P<env>[A-Za-z*]+)\}"
    r"|\\\[|\$\$"
    r"|\\(?P<cap>caption|bicaption)\s*(?:\[[^\]]*\])?\s*\{"
    r"|\\(?P<label>label)\s*\{(?P<lname>[^}]*)\}"
    r"|\\(?P<item>item|bibitem)\b"
    r"|\\(?P<foot>footnote)\s*\{"
    r"|\n[ \t]*\n"
)
_SIMPLE = {
    r"\LaTeX": "LaTeX",
    r"\TeX": "TeX",
    r"\LaTeXe": "LaTeX2e",
    r"\ldots": "…",
    r"\dots": "…",
    r"\textbackslash": "\\",
    r"\%": "%",
    r"\&": "&",
    r"\_": "_",
    r"\#": "#",
    r"\$": "$",
    r"\{": "{",
    r"\}": "}",
    "---": "—",
    "--": "–",
    "``": "“",
    "''": "”",
}


def read_source(path: Path, depth: int = 0, budget: list[int] | None = None) -> str:
    """The file's text with comments stripped and `\\input`s inlined (within its folder)."""
    budget = budget if budget is not None else [_MAX_BYTES]
    text = path.read_text(encoding="utf-8", errors="replace")
    budget[0] -= len(text)
    text = "\n".join(_COMMENT.sub("", line) for line in text.splitlines())
    root = path.parent

    def inline(m: re.Match[str]) -> str:
        name = m.group(1).strip()
        target = (root / name).with_suffix(".tex") if not name.endswith(".tex") else root / name
        try:
            target = target.resolve()
            inside = target.is_relative_to(root.resolve())
        except OSError:
            return ""
        if depth >= _MAX_DEPTH or budget[0] <= 0 or not inside or not target.is_file():
            return ""
        return read_source(target, depth + 1, budget)

    return _INPUT.sub(inline, text)


@dataclass
class _State:
    blocks: list[RawBlock] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    numbers: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    chapters: bool = False
    zh: bool = False
    last_number: str = ""
    para: list[str] = field(default_factory=list)


def parse_latex(path: Path) -> Parsed:
    """Blocks and \\title/\\author/\\date metadata of a LaTeX document (or a chapter file)."""
    source = read_source(path)
    body, preamble = source, source
    m = re.search(r"\\begin\s*\{document\}(.*?)(?:\\end\s*\{document\}|\Z)", source, re.S)
    if m:
        body, preamble = m.group(1), source[: m.start()]
    state = _State(chapters=bool(re.search(r"\\chapter\*?\s*[\[{]", body)))
    state.zh = count_cjk(body[:20000]) > 200
    _walk(body, state)
    _flush(state)
    for b in state.blocks:
        b.text = _resolve_refs(b.text, state.labels)
        if b.table is not None:
            b.text = b.table.as_text()
    meta = _meta(preamble + body[:3000])
    if not meta.title:
        meta.title = next((b.text for b in state.blocks if b.kind == "heading"), "")
    return Parsed(state.blocks, meta)


def _meta(text: str) -> Meta:
    title = _arg_after(text, r"\\title\s*(?:\[[^\]]*\])?\s*\{")
    author = _arg_after(text, r"\\author\s*(?:\[[^\]]*\])?\s*\{")
    date = _arg_after(text, r"\\date\s*\{")
    authors = []
    for part in re.split(r"\\and\b|\\\\|,|\band\b", author or ""):
        name = _inline(re.sub(r"\\(?:thanks|footnote|inst|textsuperscript)\s*\{[^}]*\}", "", part))
        if name and len(name) <= 60:
            authors.append(name)
    return Meta(
        title=_inline(title or ""),
        authors=authors,
        published_at=metadata.iso_date(_inline(date)) if date and "today" not in date else None,
    )


def _arg_after(text: str, opener: str) -> str | None:
    m = re.search(opener, text)
    return _group(text, m.end())[0] if m else None


def _group(text: str, start: int) -> tuple[str, int]:
    """The brace group whose opening brace is just before `start`; (content, end index)."""
    depth, i = 1, start
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i], i + 1
        i += 1
    return text[start:], len(text)


def _env_end(text: str, start: int, env: str) -> tuple[str, int]:
    """Content of `\\begin{env}` … `\\end{env}` (nesting aware) and the index after it."""
    opener = re.compile(rf"\\(begin|end)\s*\{{{re.escape(env)}\}}")
    depth = 1
    for m in opener.finditer(text, start):
        depth += 1 if m.group(1) == "begin" else -1
        if depth == 0:
            return text[start : m.start()], m.end()
    return text[start:], len(text)


def _walk(text: str, st: _State) -> None:
    pos = 0
    while True:
        m = _TOKEN.search(text, pos)
        if m is None:
            st.para.append(text[pos:])
            return
        st.para.append(text[pos : m.start()])
        pos = m.end()
        if m.group("sec"):
            _flush(st)
            title, pos = _group(text, pos)
            _heading(m.group("sec"), bool(m.group("star")), _inline(title), st)
        elif m.group("env"):
            pos = _environment(m.group("env"), text, pos, st)
        elif m.group(0) in ("\\[", "$$"):
            closer = "\\]" if m.group(0) == "\\[" else "$$"
            end = text.find(closer, pos)
            end = len(text) if end < 0 else end
            _formula(text[pos:end], st, numbered=False)
            pos = end + len(closer)
        elif m.group("cap"):
            caption, pos = _group(text, pos)
            if m.group("cap") == "bicaption":  # ucasthesis: {Chinese}{English}
                second = re.match(r"\s*\{", text[pos:])
                if second:
                    english, pos = _group(text, pos + second.end())
                    caption = f"{caption} {english}"
            _caption(_inline(caption), st)
        elif m.group("label"):
            if st.last_number:
                st.labels[m.group("lname")] = st.last_number
        elif m.group("foot"):
            note, pos = _group(text, pos)
            _flush(st)
            st.blocks.append(RawBlock("footnote", _inline(note)))
        elif m.group("item"):
            st.para.append("\n")
        else:  # a blank line ends a paragraph
            _flush(st)


def _heading(kind: str, starred: bool, title: str, st: _State) -> None:
    if kind == "paragraph":
        st.para.append(f"{title} ")
        return
    level = _LEVELS[kind] - (0 if st.chapters else 1)
    level = max(level, 1)
    number = ""
    if not starred and kind != "part":
        depth = level - 1
        st.numbers[depth] += 1
        for k in range(depth + 1, len(st.numbers)):
            st.numbers[k] = 0
        if kind == "chapter":
            st.counters.clear()
        number = ".".join(str(n) for n in st.numbers[: depth + 1])
        title = f"第{number}章 {title}" if kind == "chapter" and st.zh else f"{number} {title}"
    st.last_number = number
    st.blocks.append(RawBlock("heading", title, level=level))


def _environment(env: str, text: str, pos: int, st: _State) -> int:
    name = env.rstrip("*")
    content, end = _env_end(text, pos, env)
    if name in _MATH_ENVS:
        _formula(content, st, numbered=not env.endswith("*") and name != "displaymath")
    elif name in _LIST_ENVS:
        _flush(st)
        _list(content, st, depth=0)
    elif name in _CODE_ENVS:
        _flush(st)
        code = re.sub(r"^\s*\[[^\]]*\]", "", content).strip("\n")
        if code.strip():
            st.blocks.append(RawBlock("paragraph", clean_text(code)))
    elif name == "tabular" or name in ("tabularx", "longtable", "tabu", "array"):
        _flush(st)
        table = _tabular(re.sub(r"^\s*(?:\{[^}]*\}){1,2}|^\s*\[[^\]]*\]", "", content))
        if table is not None:
            st.blocks.append(RawBlock("table", table.as_text(), table=table))
    elif name in ("table", "figure", "subfigure", "wraptable"):
        _flush(st)
        kind = "table" if name != "figure" else "figure"
        before = len(st.blocks)
        st.last_number = "\x00pending"  # labels inside the float get its number
        _walk(re.sub(r"^\s*\[[^\]]*\]", "", content), st)
        _flush(st)
        _join_caption(st, before, kind)
    elif name == "abstract":
        _flush(st)
        st.blocks.append(RawBlock("heading", "摘要" if st.zh else "Abstract", level=1))
        _walk(content, st)
        _flush(st)
    elif name == "thebibliography":
        _flush(st)
        st.blocks.append(RawBlock("heading", "参考文献" if st.zh else "References", level=1))
        for item in re.split(r"\\bibitem\s*(?:\[[^\]]*\])?\s*\{[^}]*\}", content)[1:]:
            if _inline(item):
                st.blocks.append(RawBlock("reference", _inline(item)))
    elif name not in _SKIP_ENVS:
        _walk(
            re.sub(r"^\s*(?:\[[^\]]*\]|\{[^}]*\})*", "", content)
            if name != "document"
            else content,
            st,
        )
    return end


def _formula(latex: str, st: _State, *, numbered: bool) -> None:
    _flush(st)
    body = latex.strip()
    tag = re.search(r"\\tag\*?\s*\{([^}]*)\}", body)
    labels = re.findall(r"\\label\s*\{([^}]*)\}", body)
    body = re.sub(r"\\label\s*\{[^}]*\}|\\nonumber|\\notag", "", body).strip()
    number = None
    if tag:
        number = tag.group(1).strip()
    elif numbered:
        rows = [r for r in re.split(r"\\\\", latex) if r.strip()]
        counted = [r for r in rows if not re.search(r"\\nonumber|\\notag", r)] or rows[:1]
        key = "equation"
        first = st.counters.get(key, 0) + 1
        st.counters[key] = first + len(counted) - 1
        prefix = f"{st.numbers[0]}." if st.chapters and st.numbers[0] else ""
        number = f"{prefix}{first}"
    for name in labels:
        if number:
            st.labels[name] = number
    text = clean_text(" ".join(body.split()))
    if text:
        block = RawBlock("formula", text, formula_number=number, latex=text)
        st.blocks.append(block)


def _caption(text: str, st: _State) -> None:
    _flush(st)
    st.blocks.append(RawBlock("caption", text))


def _join_caption(st: _State, before: int, kind: str) -> None:
    """Number the float's caption ("Table 2: …") and attach it to its table."""
    inside = st.blocks[before:]
    caps = [b for b in inside if b.kind == "caption"]
    if not caps:
        return
    key = kind
    st.counters[key] = st.counters.get(key, 0) + 1
    prefix = f"{st.numbers[0]}." if st.chapters and st.numbers[0] else ""
    number = f"{prefix}{st.counters[key]}"
    word = {"table": "表" if st.zh else "Table", "figure": "图" if st.zh else "Figure"}[kind]
    cap = caps[0]
    cap.text = f"{word} {number}: {cap.text}" if not st.zh else f"{word} {number} {cap.text}"
    st.last_number = number
    for lname, value in list(st.labels.items()):
        if value == "\x00pending":
            st.labels[lname] = number
    for b in inside:
        if b.kind == "table" and b.table is not None and not b.table.caption:
            b.table = Table(b.table.header, b.table.rows, caption=cap.text)
            break


def _list(content: str, st: _State, depth: int) -> None:
    items: list[str] = []
    pos = 0
    text = ""
    nested = re.compile(
        r"\\begin\s*\{(itemize|enumerate|description)\}|\\item\b(?:\s*\[([^\]]*)\])?"
    )
    for m in nested.finditer(content):
        if m.start() < pos:
            continue
        text += content[pos : m.start()]
        if m.group(1):
            inner, pos = _env_end(content, m.end(), m.group(1))
            if _inline(text):
                items.append(f"{'  ' * depth}- {_inline(text)}")
            text = ""
            sub = _State(zh=st.zh)
            _list(inner, sub, depth + 1)
            items += [ln for b in sub.blocks for ln in b.text.split("\n")]
            continue
        if _inline(text):
            items.append(f"{'  ' * depth}- {_inline(text)}")
        text = f"{m.group(2)}: " if m.group(2) else ""
        pos = m.end()
    text += content[pos:]
    if _inline(text):
        items.append(f"{'  ' * depth}- {_inline(text)}")
    if items:
        st.blocks.append(RawBlock("list", "\n".join(items)))


def _tabular(content: str) -> Table | None:
    body = re.sub(
        r"\\(?:hline|toprule|midrule|bottomrule|endhead|endfirsthead|endfoot)\b|\\(?:cline|cmidrule)"
        r"\s*(?:\([^)]*\))?\s*\{[^}]*\}",
        "",
        content,
    )
    rows: list[tuple[str, ...]] = []
    for raw in re.split(r"\\\\(?:\s*\[[^\]]*\])?", body):
        if not raw.strip():
            continue
        cells: list[str] = []
        for cell in re.split(r"(?<!\\)&", raw):
            multi = re.match(r"\s*\\multicolumn\s*\{(\d+)\}\s*\{[^}]*\}\s*\{", cell)
            if multi:
                inner, _ = _group(cell, multi.end())
                cells += [_inline(inner)] + [""] * (int(multi.group(1)) - 1)
            else:
                cells.append(_inline(re.sub(r"\\multirow\s*\{[^}]*\}\s*\{[^}]*\}\s*", "", cell)))
        if any(cells):
            rows.append(tuple(cells))
    if len(rows) < 1:
        return None
    return Table(header=(rows[0],), rows=tuple(rows[1:]))


def _flush(st: _State) -> None:
    raw = "".join(st.para)
    st.para.clear()
    for chunk in re.split(r"\n[ \t]*\n", raw):
        text = _inline(chunk)
        if text:
            st.blocks.append(RawBlock("paragraph", text))


_ARG_CMDS = re.compile(
    r"\\(?:textbf|textit|emph|texttt|textsc|textrm|textsf|underline|mbox|text|uline|"
    r"textup|textmd|textnormal|hbox|fbox|mathrm|enquote|heiti|kaishu|songti)\s*\{"
)
_DROP_CMDS = re.compile(
    r"\\(?:vspace|hspace|includegraphics|setlength|addcontentsline|centering|noindent|"
    r"newpage|clearpage|cleardoublepage|maketitle|tableofcontents|bibliographystyle|"
    r"bibliography|printbibliography|protect|small|footnotesize|scriptsize|tiny|large|Large|"
    r"LARGE|huge|Huge|normalsize|bfseries|itshape|ttfamily|rmfamily|sffamily|centering|"
    r"raggedright|par|indent|linewidth|textwidth|frontmatter|mainmatter|backmatter|appendix|"
    r"hfill|vfill|smallskip|medskip|bigskip|newline|linebreak|pagebreak|label|"
    r"renewcommand|newcommand|providecommand|setcounter|addtocounter)\b\*?"
    r"(?:\s*\[[^\]]*\])?(?:\s*\{(?:[^{}]|\{[^{}]*\})*\}){0,2}"
)


def _inline(text: str) -> str:
    """LaTeX markup reduced to reading text; inline math kept as `$…$`."""
    text = re.sub(r"\\verb\*?(.)(.*?)\1", lambda m: m.group(2), text)
    text = re.sub(r"\\href\s*\{[^}]*\}\s*\{", r"\\text{", text)
    text = re.sub(r"\\url\s*\{([^}]*)\}", r"\1", text)
    text = re.sub(
        r"\\(?:cite|citep|citet|citealp|citeauthor|citeyear|parencite|textcite)\*?"
        r"(?:\s*\[[^\]]*\])*\s*\{([^}]*)\}",
        lambda m: f"[{m.group(1).strip()}]",
        text,
    )
    text = re.sub(r"\\(?:eqref)\s*\{([^}]*)\}", lambda m: f"(\ue000{m.group(1)}\ue001)", text)
    text = re.sub(r"\\(?:ref|autoref|cref|Cref|pageref)\s*\{([^}]*)\}", "\ue000\\1\ue001", text)
    text = _DROP_CMDS.sub("", text)
    for _ in range(5):
        new = _ARG_CMDS.sub("{", text)
        if new == text:
            break
        text = new
    math: list[str] = []

    def keep(m: re.Match[str]) -> str:
        math.append(m.group(0))
        return f"\x01{len(math) - 1}\x01"

    text = re.sub(r"(?<!\\)\$[^$]+(?<!\\)\$|\\\((.+?)\\\)", keep, text)
    for k, v in _SIMPLE.items():
        text = text.replace(k, v)
    text = re.sub(r"\\\\(?:\s*\[[^\]]*\])?", " ", text)
    text = re.sub(r"\\[A-Za-z]+\*?(?:\s*\[[^\]]*\])?", "", text)  # any other command name
    text = text.replace("~", " ").replace("{", "").replace("}", "")
    text = re.sub(r"\x01(\d+)\x01", lambda m: math[int(m.group(1))], text)
    return clean_text(" ".join(text.split()))


def _resolve_refs(text: str, labels: dict[str, str]) -> str:
    return re.sub("\ue000([^\ue001]*)\ue001", lambda m: labels.get(m.group(1), "??"), text)
