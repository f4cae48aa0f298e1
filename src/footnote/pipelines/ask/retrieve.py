"""Retrieval for ask: which blocks the composer is shown, in which order.

Hybrid search gives a fused candidate pool; the strategy then reorders it:

- **windows**: each candidate is scored by its best window of two sentences (IDF-weighted
  coverage of the question's terms, IDF over the candidate's paper), blended with its fused rank,
  so the paragraph whose one sentence answers beats a long one that mentions every word once;
- **prose first**: formula and figure text, garbled extraction debris and bibliography entries
  are demoted below prose that matches as well;
- **sections**: a cross-section question gets its shown items from at least two sections;
- **bilingual**: when the question's language differs from the paper's and a translator is
  given, the translated question is searched too and both rankings are fused.

Tables the question names ("Table 2", "表2") are loaded as structure and put first. `TODAY` is
the strategy before this module (search order, no reordering), kept for same-run comparisons in
`bench/ask_retrieval.py`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from footnote.index import SearchFilters, SearchFn
from footnote.index.windows import PaperWindows, WindowScorer, excerpt, garbled
from footnote.ingest.captions import caption_ref
from footnote.pipelines.ask.understand import Understanding
from footnote.store.base import DocumentStore
from footnote.textnorm import text_lang
from footnote.types import Block, Hit
from footnote.verify import Evidence, relevance

Translate = Callable[[str, str], str]
"""`translate(question, target_lang)` → the question in that language."""
_DEMOTED_KINDS = frozenset({"formula", "figure", "reference", "footnote"})


@dataclass(frozen=True)
class Strategy:
    """How candidates are fetched and reordered (see the module docstring)."""

    name: str
    pool: int = 24
    """Candidates fetched before reordering (0: the search's own k)."""
    windows: bool = True
    window_weight: float = 0.6
    """Share of the order decided by the best sentence window (the rest by fused rank)."""
    prose_first: bool = True
    demote: float = 0.5
    """Factor applied to the order score of non-prose blocks."""
    sections: bool = True
    bilingual: bool = True
    scan: bool = False
    """Also rank every block of the (≤ 3) papers searched by best window, fused with the search."""
    excerpt_chars: int = 0
    """Prose longer than this is shown (and checked) as its best-matching sentences (0: whole;
    700 cost 2 of 35 dev-test gold quotes in `bench/ask_retrieval.py`, so it is off)."""


TODAY = Strategy("today", pool=0, windows=False, prose_first=False, sections=False, bilingual=False)
DEFAULT = Strategy("windows+prose+sections")


@dataclass
class Retrieved:
    """Evidence in the order it is shown, the nearest hits (for refusals) and the queries run."""

    evidence: list[Evidence]
    nearest: tuple[Hit, ...]
    queries: tuple[str, ...] = ()
    scores: dict[str, float] = field(default_factory=dict)
    """Order score of each evidence id (for traces)."""


class Retriever:
    """One question's retrieval: search, reorder, and turn blocks into evidence."""

    def __init__(
        self,
        search: SearchFn,
        store: DocumentStore,
        *,
        evidence_k: int,
        k: int,
        cosine_band: tuple[float, float] = (0.75, 0.92),
        strategy: Strategy = DEFAULT,
        translate: Translate | None = None,
    ) -> None:
        self.search, self.store = search, store
        self.evidence_k, self.k = evidence_k, k
        self.cosine_band = cosine_band
        self.strategy = strategy
        self.translate = translate
        self._scorers: dict[str, WindowScorer] = {}
        self._papers: dict[str, tuple[PaperWindows, dict[str, Block]]] = {}
        self._langs: dict[str, str] = {}

    def __call__(self, question: str, und: Understanding, filters: SearchFilters) -> Retrieved:
        s = self.strategy
        k = max(self.k, s.pool)
        hits = self.search(question, k, filters)
        queries = [question]
        if s.bilingual and self.translate is not None and hits:
            other = self._paper_lang(hits)
            if other != und.lang:
                translated = self.translate(question, other).strip()
                if translated and translated != question:
                    queries.append(translated)
                    hits = _fuse([hits, self.search(translated, k, filters)])
        if s.scan and 0 < len(filters.source_ids) <= 3:
            hits = _fuse([hits, self._scan(queries, filters.source_ids, k)])
        tables = _referenced_tables(self.store, und, hits, filters)
        blocks: list[tuple[Block, float | None, int]] = []
        seen: set[str] = set()
        for rank, (block, cosine) in enumerate(
            [*((t, None) for t in tables), *((h.block, h.scores.get("vector")) for h in hits)]
        ):
            if block.id in seen or block.kind == "heading":
                continue
            seen.add(block.id)
            blocks.append((block, cosine, rank))
        order = self._order(queries, und, blocks, n_tables=len(tables))
        cos_floor, cos_ceil = self.cosine_band
        evidence = []
        for block, cosine, _rank in (blocks[i] for i in order):
            text = _text(block)
            context = " ".join(block.section_path[-1:])
            rel = max(
                relevance(q, context + " " + text, cosine, floor=cos_floor, ceiling=cos_ceil)
                for q in queries
            )
            if block.table is not None and und.table_refs:
                rel = max(rel, 0.5)
            if self.strategy.excerpt_chars and block.table is None:
                text = excerpt(
                    queries[-1], text, self._scorer(block.source_id), self.strategy.excerpt_chars
                )
            evidence.append(Evidence(block.id, text, block, relevance=round(rel, 4)))
        return Retrieved(evidence, tuple(hits[:3]), tuple(queries))

    # -- ordering -------------------------------------------------------------------------
    def _order(
        self,
        queries: Sequence[str],
        und: Understanding,
        blocks: Sequence[tuple[Block, float | None, int]],
        *,
        n_tables: int,
    ) -> list[int]:
        s = self.strategy
        if not (s.windows or s.prose_first):
            return list(range(len(blocks)))
        n = max(1, len(blocks))
        scores: list[float] = []
        for i, (block, _cos, _rank) in enumerate(blocks):
            score = 1.0 - i / n
            if s.windows:
                scorer = self._scorer(block.source_id)
                best = max(scorer.best_window(q, _text(block))[0] for q in queries)
                score = (1 - s.window_weight) * score + s.window_weight * best
            if s.prose_first and _non_prose(block, und):
                score *= s.demote
            if i < n_tables:
                score += 10.0  # tables the question names stay first
            scores.append(score)
        order = sorted(range(len(blocks)), key=lambda i: (-scores[i], i))
        if s.sections and und.type in ("cross_section", "counterfactual"):
            order = _spread(order, [b for b, _c, _r in blocks], self.evidence_k)
        return order

    def _scan(self, queries: Sequence[str], source_ids: Sequence[str], n: int) -> list[Hit]:
        """Blocks of the papers ranked by their best window for any of the queries."""
        best: dict[str, tuple[float, Block]] = {}
        for sid in source_ids:
            if sid not in self._papers:
                blocks = {b.id: b for b in self.store.iter_blocks(sid) if b.kind != "heading"}
                paper = PaperWindows([(i, _text(b)) for i, b in blocks.items()])
                self._papers[sid] = (paper, blocks)
            paper, blocks = self._papers[sid]
            for q in queries:
                for key, score in paper.rank(q, n):
                    if key not in best or score > best[key][0]:
                        best[key] = (score, blocks[key])
        ranked = sorted(best.values(), key=lambda x: -x[0])[:n]
        return [Hit(b, score, scores={"windows": score}) for score, b in ranked]

    def _scorer(self, source_id: str) -> WindowScorer:
        if source_id not in self._scorers:
            self._scorers[source_id] = WindowScorer.over(
                _text(b) for b in self.store.iter_blocks(source_id) if b.kind != "heading"
            )
        return self._scorers[source_id]

    def _paper_lang(self, hits: Sequence[Hit]) -> str:
        """The language most of the hits' papers are written in."""
        langs: Counter[str] = Counter()
        for h in hits[:10]:
            sid = h.block.source_id
            if sid not in self._langs:
                sample = " ".join(
                    b.text for _, b in zip(range(40), self.store.iter_blocks(sid), strict=False)
                )
                self._langs[sid] = "zh" if text_lang(sample) == "zh" else "en"
            langs[self._langs[sid]] += 1
        return langs.most_common(1)[0][0] if langs else "en"


def _text(block: Block) -> str:
    return block.table.as_text() if block.table is not None else block.text


def _non_prose(block: Block, und: Understanding) -> bool:
    if block.table is not None:
        return False
    if block.kind in _DEMOTED_KINDS and not (block.kind == "figure" and und.figure_refs):
        return True
    return garbled(block.text)


def _spread(order: list[int], blocks: Sequence[Block], shown: int) -> list[int]:
    """Reorder so the first `shown` items come from at least two sections when any other exists."""
    top = order[:shown]
    if len({blocks[i].section_path for i in top}) > 1:
        return order
    other = next(
        (i for i in order[shown:] if blocks[i].section_path != blocks[top[0]].section_path), None
    )
    if other is None or shown < 2:
        return order
    rest = [i for i in order if i != other]
    return [*rest[: shown - 1], other, *rest[shown - 1 :]]


def _fuse(rankings: Sequence[Sequence[Hit]], k: int = 60) -> list[Hit]:
    """Reciprocal-rank fusion of hit lists (by block id); the first list's hit objects win."""
    score: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for hits in rankings:
        for rank, h in enumerate(hits):
            score[h.block.id] = score.get(h.block.id, 0.0) + 1.0 / (k + rank + 1)
            first.setdefault(h.block.id, h)
    return [first[i] for i in sorted(score, key=lambda i: -score[i])]


def _referenced_tables(
    store: DocumentStore, und: Understanding, hits: Sequence[Hit], filters: SearchFilters
) -> list[Block]:
    """Table blocks the question names ("Table 2", "表2"), loaded as structure."""
    if not und.table_refs:
        return []
    sources = list(filters.source_ids) or list(dict.fromkeys(h.block.source_id for h in hits))
    found: list[Block] = []
    for source_id in sources[:5]:
        for block in store.iter_blocks(source_id):
            if block.table is None:
                continue
            ref = caption_ref(block.table.caption)
            if ref is not None and ref[0] == "table" and ref[1] in und.table_refs:
                found.append(block)
    return found
