"""Entity alignment: a question's mention → graph node keys, exact first, vectors last.

1. exact: normalised (NFKC, case, width) names and aliases in the alias table;
2. keyword: every token of the mention occurs in the name ("Hanks" → Tom Hanks);
3. transliteration: a Chinese rendering meets a Latin name on its sound key
   ("朗·霍华德" → Ron Howard; `translit`), or a part of one said alone ("凯文" → Kevin Bacon
   or Kevin Pollak);
4. vector: only when all fail, HNSW over name embeddings (multilingual e5).
Two candidates with close scores make the alignment ambiguous: the pipeline asks back.
The alias table and the HNSW file live beside the graph (`aliases`), built at import
(`build_alignment`) and opened, never rebuilt, per request. Property values are aligned
too (`align_value`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footnote.config import GraphSettings
from footnote.config.graph import alignment_thresholds
from footnote.index.graph.aliases import FORMAT as ALIAS_FORMAT
from footnote.index.graph.aliases import TABLE_FILE, AliasTable, NameVectors, Row
from footnote.index.graph.translit import deletes, han_key, han_names, transliteration_like
from footnote.models.base import Embedder, Vectors
from footnote.store.graph.base import GraphStore
from footnote.textnorm import CJK_RE, normalise, tokens

TRANSLIT_EXACT = 0.9
"""Score of a transliteration whose sound key matches exactly."""
_NEAR_MIN_CLASSES = 3
"""Sound classes a key needs before a one-class difference is tolerated (凯文 is K, H)."""
TRANSLIT_NEAR = 0.8
"""Score of one within one consonant class."""
TRANSLIT_PART = 0.8
"""Score of a one-part rendering (凯文, 汉克斯) whose key is one part of a longer name."""
VALUE_MAX_CHARS = 60
"""Longer string values (taglines, descriptions) are text, not values to align."""
VALUES_PER_PROPERTY = 100_000


@dataclass(frozen=True)
class Entity:
    """A named node."""

    label: str
    key: str
    name: str
    aliases: tuple[str, ...] = ()
    prop: str = ""
    """Set for a property value: the property it is a value of (its key is the value)."""


@dataclass(frozen=True)
class Candidate:
    """An entity proposed for a mention, with the method that found it."""

    entity: Entity
    score: float
    method: str


@dataclass(frozen=True)
class Alignment:
    """The outcome for one mention: ranked candidates, and whether to ask back."""

    mention: str
    candidates: tuple[Candidate, ...]
    ambiguous: bool = False

    @property
    def best(self) -> Candidate | None:
        """The top candidate, or None."""
        return self.candidates[0] if self.candidates else None


class EntityIndex:
    """Exact, keyword, transliteration and vector lookup over a graph's alias table.

    Built from `entities` in memory, or opened on the table persisted beside a graph
    (`EntityIndex.open`): then nothing is built per request."""

    def __init__(
        self,
        entities: Sequence[Entity],
        embedder: Embedder | None = None,
        *,
        cache_dir: Path | None = None,
        min_cosine: float = 0.8,
        margin: float = 0.015,
        table: AliasTable | None = None,
    ) -> None:
        self.entities = list(entities)
        self.embedder = embedder
        self.cache_dir = cache_dir
        self.min_cosine = min_cosine
        self.margin = margin
        if table is None:
            table = AliasTable(None)
            table.build((e.label, e.key, e.name, e.aliases) for e in self.entities)
        self.table = table
        self._names = NameVectors(table, embedder, cache_dir) if embedder is not None else None
        self._vectors: Vectors | None = None

    @classmethod
    def open(
        cls, table: AliasTable, embedder: Embedder | None, folder: Path | None, **kw: float
    ) -> EntityIndex:
        """The index over a persisted alias table (its HNSW file in `folder`)."""
        return cls((), embedder, cache_dir=folder, table=table, **kw)

    def _cands(
        self, ids: Sequence[int], labels: Sequence[str] | None, values: bool = False
    ) -> list[Row]:
        rows = self.table.rows(ids)
        out = [rows[i] for i in dict.fromkeys(ids) if i in rows]
        return [r for r in out if (not labels or r.label in labels) and bool(r.prop) == values]

    def align(self, mention: str, labels: Sequence[str] | None = None) -> Alignment:
        """Candidates for `mention`, optionally only of these labels."""
        return self._align(mention, labels, values=False)

    def align_value(self, mention: str, labels: Sequence[str] | None = None) -> Alignment:
        """Property values for `mention` ('United States' → Customer.country 'USA' by
        vectors, 'usa' exactly): candidates whose entity is (label, value) with `prop` set."""
        return self._align(mention, labels, values=True)

    def _align(self, mention: str, labels: Sequence[str] | None, values: bool) -> Alignment:
        if _one_latin_letter(mention):  # a query variable ('节点a'), never a name
            return Alignment(mention, ())
        kinds = ("value",) if values else ("name", "alias")
        exact = self._cands(self.table.exact(normalise(mention), kinds), labels, values)
        if exact:
            cands = tuple(Candidate(_entity(r), 1.0, "exact") for r in exact)
            return Alignment(mention, cands, ambiguous=len(_distinct(cands)) > 1)
        toks = tokens(mention)
        found = self._cands(sorted(self.table.with_tokens(toks)), labels, values) if toks else []
        if found:
            said, named = set(toks), [(r, tokens(r.name)) for r in found]
            ranked = sorted(
                ((Candidate(_entity(r), len(toks) / max(1, len(words)), "keyword"), words)
                 for r, words in named),
                key=lambda cw: -cw[0].score,
            )  # fmt: skip
            scored = [c for c, _ in ranked]
            top = scored[0].score
            close = [c for c in scored if c.score >= top - 1e-9]
            # every word said is in several names ("Louisiana" → two products): a shorter
            # name is no likelier meant, whatever share of its words the mention covers
            whole = [c for c, words in ranked if said <= set(words)]
            doubt = len(_distinct(close)) > 1 or len(_distinct(whole)) > 1
            shown = whole if len(_distinct(whole)) > 1 else scored
            return Alignment(mention, tuple(shown[:5]), ambiguous=doubt)
        if not values:
            sound = self._transliterated(mention, labels)
            if sound.candidates:
                return sound
        return self._vector(mention, labels, values)

    def _transliterated(
        self, mention: str, labels: Sequence[str] | None, near: bool = True
    ) -> Alignment:
        """A Chinese rendering of a Latin name, by sound key: one exact key match; else, for a
        one-part rendering (凯文, 汉克斯), the names holding that part; else one match within
        one class (`translit1`). Several are ambiguous. A one-part mention is a rendering only
        when each of its characters is one names are spelled with (调味品类 is a word)."""
        key = han_key(mention) if CJK_RE.search(mention) else ""
        if not key or ("|" not in key and len(key) < 2):
            return Alignment(mention, ())
        if "|" not in key and not transliteration_like(mention):  # 调味品类 is a word, no name
            return Alignment(mention, ())
        tiers: list[tuple[tuple[str, ...], list[str], float]] = [
            (("translit",), [key], TRANSLIT_EXACT)
        ]
        if "|" not in key:
            tiers.append((("translit_part",), [key], TRANSLIT_PART))
        # one class off a key of two is a key of one: every short name would sound alike
        if near and len(key.replace("|", "")) >= _NEAR_MIN_CLASSES:
            tiers.append((("translit", "translit1"), [key, *deletes(key)], TRANSLIT_NEAR))
        for kinds, probes, score in tiers:
            hits = self._cands([i for _, i in self.table.lookup(probes, kinds)], labels)
            if hits:
                cands = tuple(Candidate(_entity(r), score, "transliteration") for r in hits[:5])
                return Alignment(mention, cands, ambiguous=len(_distinct(cands)) > 1)
        return Alignment(mention, ())

    def _vector(self, mention: str, labels: Sequence[str] | None, values: bool) -> Alignment:
        if self._names is None or self.embedder is None:
            return Alignment(mention, ())
        q = self.embedder.embed_query(mention)
        hits = self._names.search(q, 50)
        score = dict(hits)
        rows = self._cands([i for i, _ in hits], labels, values)[:5]
        cands = tuple(
            Candidate(_entity(r), score[r.id], "vector")
            for r in rows
            if score[r.id] >= self.min_cosine
        )
        ambiguous = len(cands) > 1 and cands[1].score >= cands[0].score - self.margin
        return Alignment(mention, cands, ambiguous=ambiguous and len(_distinct(cands[:2])) > 1)

    def close(self) -> None:
        """Close the alias table."""
        self.table.close()

    def vectors(self) -> Vectors:
        """Embeddings of the names this index was built from (for calibration benches)."""
        if self._vectors is None:
            assert self.embedder is not None
            self._vectors = self.embedder.embed_passages([e.name for e in self.entities])
        return self._vectors

    def mentions(self, question: str, max_mentions: int = 4) -> list[str]:
        """Names and aliases that occur verbatim (normalised) in `question`, longest first,
        then spans that are a transliterated name ("朗·霍华德")."""
        q = normalise(question)
        hit = {n for n, _ in self.table.lookup(_spans(q), ("name", "alias"))}
        found: list[str] = []
        for key in sorted(hit, key=len, reverse=True):
            if len(key) < 3 or any(key in f for f in found):
                continue
            if key.isascii() and not _word_bounded(q, key):
                continue
            found.append(key)
            if len(found) >= max_mentions:
                return found
        taken = [(q.find(f), q.find(f) + len(f)) for f in found]
        for near in (False, True):  # an exact sound key anywhere beats a near one
            for span in han_names(question):
                at = q.find(normalise(span))
                if at < 0 or any(at < b and a < at + len(span) for a, b in taken):
                    continue
                if self._transliterated(span, None, near=near).candidates:
                    found.append(span)
                    taken.append((at, at + len(span)))
                    if len(found) >= max_mentions:
                        return found
        return found


def _one_latin_letter(mention: str) -> bool:
    m = normalise(mention).strip()
    return len(m) == 1 and m.isascii() and m.isalpha()


_BOUNDARY = re.compile(r"\b|(?<=[^\w\s])|(?=[^\w\s])|(?<=\s)")


def _spans(q: str, max_len: int = 80) -> list[str]:
    """Every substring of `q` that starts and ends at a word boundary (each CJK character is a
    boundary), up to `max_len` characters: the probes for verbatim names."""
    cuts = sorted({0, len(q)} | {m.start() for m in _BOUNDARY.finditer(q)}
                  | {i for i, ch in enumerate(q) if CJK_RE.match(ch)}
                  | {i + 1 for i, ch in enumerate(q) if CJK_RE.match(ch)})  # fmt: skip
    out = set()
    for a, start in enumerate(cuts):
        for end in cuts[a + 1 :]:
            if end - start > max_len:
                break
            s = q[start:end].strip()
            if len(s) >= 3:
                out.add(s)
    return sorted(out)


def _entity(r: Row) -> Entity:
    return Entity(r.label, r.key, r.name, (), r.prop)


def _word_bounded(text: str, key: str) -> bool:
    """`key` (ASCII) occurs in `text` between word boundaries; a CJK character beside it is a
    boundary ("Tom Hanks演过…"), a Latin letter or digit is not."""
    start = text.find(key)
    while start >= 0:
        end = start + len(key)
        left = start == 0 or not _latin_word_char(text[start - 1])
        right = end == len(text) or not _latin_word_char(text[end])
        if left and right:
            return True
        start = text.find(key, start + 1)
    return False


def _latin_word_char(ch: str) -> bool:
    return ch.isalnum() and ch.isascii()


def _distinct(cands: Sequence[Candidate]) -> set[tuple[str, str]]:
    return {(c.entity.label, c.entity.key) for c in cands}


def _values(store: GraphStore) -> Iterator[tuple[str, str, str]]:
    """(label, property, value) for distinct short string values of non-name properties (a
    row-filter property's values stay out: they would tell one caller what another holds)."""
    for label, node in store.spec.nodes.items():
        guarded = store.spec.restricted.get(label)
        for prop, typ in node.properties.items():
            if typ != "STRING" or prop in (node.key, node.name, node.aliases):
                continue
            if guarded is not None and prop == guarded.property:
                continue
            cypher = f"MATCH (n:`{label}`) RETURN DISTINCT n.`{prop}` AS v"
            rows = store.query(cypher, {}, limit=VALUES_PER_PROPERTY, timeout_s=120).rows
            for (v,) in rows:
                if isinstance(v, str) and 0 < len(v) <= VALUE_MAX_CHARS:
                    yield label, prop, v


def build_alignment(store: GraphStore, folder: Path | None) -> AliasTable:
    """(Re)build the alias table of a graph from its named nodes, the spec's extra aliases
    and its string values (at import; persisted in `folder`, in memory when None)."""
    extra = store.spec.aliases
    table = AliasTable(folder / TABLE_FILE if folder is not None else None)
    named = (
        (label, key, name, aliases + extra.get(f"{label}:{key}", []))
        for label, key, name, aliases in store.entities()
    )
    table.build(named, _values(store))
    return table


def entity_index(
    store: GraphStore, embedder: Any, settings: GraphSettings, folder: Path | None
) -> EntityIndex:
    """The alignment index of a graph: opened on the alias table persisted in `folder` (built
    there once if the graph predates it or its format), or built in memory when `folder` is
    None."""
    table = None
    if folder is not None and (folder / TABLE_FILE).exists():
        table = AliasTable(folder / TABLE_FILE)
        if table.generation() == 0 or table.format() != ALIAS_FORMAT:
            table.close()
            table = None
    if table is None:
        table = build_alignment(store, folder)
    min_cosine, margin = alignment_thresholds(settings)
    return EntityIndex.open(table, embedder, folder, min_cosine=min_cosine, margin=margin)
