"""Text for the lexical index and safe FTS5 queries.

Latin text is left to FTS5's `porter unicode61` tokenizer (stemming happens there).
CJK runs are segmented with jieba in search mode (知识图谱 → 知识 / 图谱 / 知识图谱) into a
separate column, because `unicode61` would index a whole run of ideographs as one token and
`trigram` cannot match two-character words (see bench/retrieval_quality.py for the numbers).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from footnote.textnorm import CJK_RUN_RE, STOP_WORDS_EN, STOP_WORDS_ZH, jieba_segmenter
from footnote.types import Block

_WORD_RE = re.compile(r"[^\W_]+")
MAX_QUERY_TERMS = 64


def cjk_words(text: str) -> list[str]:
    """jieba search-mode words of every CJK run in `text` (single characters included)."""
    runs = CJK_RUN_RE.findall(text)
    if not runs:
        return []
    jieba = jieba_segmenter()
    out: list[str] = []
    for run in runs:
        out.extend(w for w in jieba.cut_for_search(run) if w.strip())
    return out


def block_text(block: Block) -> str:
    """The searchable text of a block: its text plus a table's caption, header and cells."""
    if block.table is None:
        return block.text
    table = block.table.as_text()
    return table if not block.text.strip() or block.text in table else f"{block.text}\n{table}"


def embed_text(block: Block) -> str:
    """What the embedder sees: `section: text` (as in small-model-qa), capped at 4,000 chars."""
    body = block_text(block)
    head = block.section_path[-1] if block.section_path else ""
    return (f"{head}: {body}" if head else body)[:4000]


def content_hash(text: str) -> str:
    """Hash of the embedded text: a vector is reused when (model, hash) is already stored."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def fts_columns(block: Block) -> tuple[str, str, str]:
    """(section, body, cjk) column values for `blocks_fts`."""
    section = " / ".join(block.section_path)
    body = block_text(block)
    return section, body, " ".join(cjk_words(f"{section}\n{body}"))


def query_terms(query: str) -> tuple[list[str], list[str]]:
    """(latin words, CJK words) of a query, stop words dropped, de-duplicated, in order."""
    latin: list[str] = []
    for part in CJK_RUN_RE.split(query):
        latin.extend(w.lower() for w in _WORD_RE.findall(part))
    latin = [w for w in latin if w not in STOP_WORDS_EN and (len(w) > 1 or w.isdigit())]
    cjk: list[str] = []
    for run in CJK_RUN_RE.findall(query):
        words = [w for w in cjk_words(run) if len(w) > 1 and w not in STOP_WORDS_ZH]
        cjk.extend(words or [run] if len(run) == 1 else words)
    return _unique(latin), _unique(cjk)


def _unique(words: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(words))


def match_terms(query: str) -> list[str]:
    """The query's terms as matched: Latin words then CJK words, at most `MAX_QUERY_TERMS`."""
    latin, cjk = query_terms(query)
    return (latin + cjk)[:MAX_QUERY_TERMS]


def fts_match(query: str) -> str | None:
    """A safe FTS5 MATCH expression (quoted terms joined by OR), or None when nothing is left.

    Every term is a double-quoted string with inner quotes doubled, so operators, `*`, `:`,
    parentheses, `NEAR` or column names in user text are plain words, never syntax.
    """
    terms = match_terms(query)
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def mark_cjk(text: str, words: Iterable[str], left: str = "«", right: str = "»") -> str:
    """Wrap occurrences of CJK query words in markers (longest first, never nested)."""
    ws = sorted({w for w in words if w}, key=len, reverse=True)
    if not ws:
        return text
    pattern = re.compile("|".join(re.escape(w) for w in ws))
    pieces = re.split(f"({re.escape(left)}.*?{re.escape(right)})", text)
    return "".join(
        p if p.startswith(left) else pattern.sub(lambda m: f"{left}{m.group(0)}{right}", p)
        for p in pieces
    )
