"""The alignment index persisted beside a graph: an alias table and an HNSW name index.

`<graph>/align/aliases.sqlite` holds one row per aligned thing (`entity`: a named node, or a
distinct short string value of a property) and its alias rows (`alias`: the name, declared
aliases, spec aliases, transliteration keys, their one-deletion neighbours and the keys of
a name's parts, each with its kind), plus a word-token table for keyword lookup; every
lookup is an indexed query.
`<graph>/align/vectors-<embedder>.usearch` is the HNSW index (usearch) of the entity
names, keyed by the entity's stable id; it records the table generation it reflects and
is synced (new ids embedded, gone ids removed) when that changes — after an import, never
per request. `BUILDS` counts table and vector builds (tests show requests do not build).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from footnote.index.graph.places import translations
from footnote.index.graph.translit import deletes, latin_key
from footnote.models.base import Embedder
from footnote.textnorm import normalise, tokens

TABLE_FILE = "aliases.sqlite"
BUILDS: Counter[str] = Counter()
"""How many times each part was built in this process (`table`, `vectors`)."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity(id INTEGER PRIMARY KEY, label TEXT NOT NULL,
  key TEXT NOT NULL, name TEXT NOT NULL, prop TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alias(norm TEXT NOT NULL, entity INTEGER NOT NULL,
  kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS token(tok TEXT NOT NULL, entity INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
"""
_INDEXES = """
CREATE INDEX IF NOT EXISTS alias_norm ON alias(norm);
CREATE INDEX IF NOT EXISTS token_tok_entity ON token(tok, entity);
"""
"""`token_tok_entity` covers the keyword lookup (no row fetch per matching name: at 1M names a
common word matches ~1,500 rows); a table built before it kept `token_tok` (still correct,
slower) until its next import."""
_EXACT_KINDS = ("name", "alias")
FORMAT = 2
"""What the alias rows hold: 2 adds place-name translations and name-part sound keys. A
table built in an older format is rebuilt once when the graph is next opened."""


def keyword_sql(words: int) -> str:
    """The keyword lookup: entities whose name holds each of `words` tokens (`?` each)."""
    return " INTERSECT ".join(["SELECT entity FROM token WHERE tok = ?"] * words)


@dataclass(frozen=True)
class Row:
    """One aligned thing: a named node (`prop` "") or a property value (`prop` its name)."""

    id: int
    label: str
    key: str
    name: str
    prop: str = ""


def stable_id(label: str, prop: str, key: str) -> int:
    """A 63-bit id that survives re-imports (the vector index keeps unchanged names)."""
    digest = hashlib.blake2b(f"{label}\x1f{prop}\x1f{key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


class AliasTable:
    """The persisted alias table (or an in-memory one when `path` is None)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        self._db.executescript(_SCHEMA)

    def generation(self) -> int:
        """How many times the table was (re)built; 0 when it never was."""
        row = self._db.execute("SELECT v FROM meta WHERE k = 'gen'").fetchone()
        return int(row[0]) if row else 0

    def format(self) -> int:
        """The format the table was built in (0: before formats were recorded)."""
        row = self._db.execute("SELECT v FROM meta WHERE k = 'format'").fetchone()
        return int(row[0]) if row else 0

    def build(
        self,
        named: Iterable[tuple[str, str, str, Sequence[str]]],
        values: Iterable[tuple[str, str, str]] = (),
    ) -> int:
        """Replace the contents: `named` (label, key, name, aliases) nodes and `values`
        (label, property, value) strings. Returns the number of entity rows."""
        BUILDS["table"] += 1
        gen = self.generation() + 1
        db = self._db
        with db:
            db.executescript(
                "DROP INDEX IF EXISTS alias_norm; DROP INDEX IF EXISTS token_tok;"
                "DROP INDEX IF EXISTS token_tok_entity;"
                "DELETE FROM entity; DELETE FROM alias; DELETE FROM token;"
            )
            ents: dict[int, tuple[int, str, str, str, str]] = {}
            aliases: list[tuple[str, int, str]] = []
            toks: list[tuple[str, int]] = []
            for label, key, name, names in named:
                i = stable_id(label, "", key)
                ents[i] = (i, label, key, name, "")
                aliases.append((normalise(name), i, "name"))
                aliases += [(normalise(a), i, "alias") for a in names if normalise(a)]
                aliases += [(normalise(t), i, "alias") for t in translations(name)]
                toks += [(t, i) for t in dict.fromkeys(tokens(name))]
                sound = latin_key(name)
                if sound:
                    aliases.append((sound, i, "translit"))
                    aliases += [(d, i, "translit1") for d in deletes(sound)]
                    parts = sound.split("|")
                    if len(parts) > 1:  # a given name or a surname said alone (凯文, 汉克斯)
                        aliases += [(p, i, "translit_part") for p in dict.fromkeys(parts)
                                    if len(p) >= 2]  # fmt: skip
            for label, prop, value in values:
                i = stable_id(label, prop, value)
                if i not in ents:
                    ents[i] = (i, label, value, value, prop)
                    aliases.append((normalise(value), i, "value"))
                    aliases += [(normalise(t), i, "value") for t in translations(value)]
                    toks += [(t, i) for t in dict.fromkeys(tokens(value))]
            db.executemany("INSERT OR REPLACE INTO entity VALUES (?, ?, ?, ?, ?)", ents.values())
            db.executemany("INSERT INTO alias VALUES (?, ?, ?)", aliases)
            db.executemany("INSERT INTO token VALUES (?, ?)", toks)
            db.executescript(_INDEXES)
            db.execute("INSERT OR REPLACE INTO meta VALUES ('gen', ?)", (str(gen),))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (str(FORMAT),))
        return len(ents)

    def count(self) -> int:
        """Entity rows."""
        return int(self._db.execute("SELECT count(*) FROM entity").fetchone()[0])

    def rows(self, ids: Iterable[int]) -> dict[int, Row]:
        """Entity rows by id."""
        ids = list(dict.fromkeys(ids))
        out: dict[int, Row] = {}
        for start in range(0, len(ids), 900):
            chunk = ids[start : start + 900]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id, label, key, name, prop FROM entity WHERE id IN ({marks})"
            for r in self._db.execute(sql, chunk):
                out[r[0]] = Row(*r)
        return out

    def lookup(self, norms: Sequence[str], kinds: Sequence[str]) -> list[tuple[str, int]]:
        """(norm, entity id) of alias rows of these kinds whose text is one of `norms`."""
        out: list[tuple[str, int]] = []
        norms = list(dict.fromkeys(n for n in norms if n))
        kind_marks = ",".join("?" * len(kinds))
        for start in range(0, len(norms), 900):
            chunk = norms[start : start + 900]
            sql = (
                f"SELECT norm, entity FROM alias WHERE norm IN ({','.join('?' * len(chunk))}) "
                f"AND kind IN ({kind_marks})"
            )
            out += [(str(r[0]), int(r[1])) for r in self._db.execute(sql, [*chunk, *kinds])]
        return out

    def exact(self, norm: str, kinds: Sequence[str] = _EXACT_KINDS) -> list[int]:
        """Entity ids whose name or alias (or other `kinds`) normalises to `norm`."""
        return list(dict.fromkeys(i for _, i in self.lookup([norm], kinds)))

    def with_tokens(self, toks: Sequence[str]) -> set[int]:
        """Entity ids whose name holds every token (one statement: SQLite intersects the
        covering index's runs, Python never sees the ids of one common word)."""
        words = sorted(set(toks))
        if not words:
            return set()
        return {int(r[0]) for r in self._db.execute(keyword_sql(len(words)), words)}

    def plan(self, sql: str, n: int) -> str:
        """SQLite's query plan of `sql` with `n` parameters (what a lookup reads)."""
        rows = self._db.execute("EXPLAIN QUERY PLAN " + sql, ["x"] * n).fetchall()
        return "\n".join(str(r[-1]) for r in rows)

    def names(self) -> list[tuple[int, str]]:
        """(id, name) of every entity row, for the vector index."""
        return [(int(r[0]), str(r[1])) for r in self._db.execute("SELECT id, name FROM entity")]

    def close(self) -> None:
        """Close the database."""
        self._db.close()


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


class NameVectors:
    """The HNSW index of entity names for one embedder (in memory when `folder` is None)."""

    def __init__(self, table: AliasTable, embedder: Embedder, folder: Path | None) -> None:
        self.table = table
        self.embedder = embedder
        name = _slug(getattr(embedder, "name", "embedder"))
        self.path = folder / f"vectors-{name}.usearch" if folder is not None else None
        self.index: Any = None

    def _meta(self) -> dict[str, Any]:
        if self.path is None:
            return {}
        try:
            meta: dict[str, Any] = json.loads(self.path.with_suffix(".json").read_text())
            return meta if self.path.exists() else {}
        except (OSError, ValueError):
            return {}

    def ready(self) -> Any:
        """The index, opened from disk when it reflects the table, else synced and saved."""
        if self.index is not None:
            return self.index
        from usearch.index import Index

        gen = self.table.generation()
        meta = self._meta()
        if self.path is not None and meta.get("gen") == gen:
            self.index = Index.restore(str(self.path), view=True)
            return self.index
        BUILDS["vectors"] += 1
        index = Index.restore(str(self.path), view=False) if meta else None
        ids_names = self.table.names()
        keys = np.asarray([i for i, _ in ids_names], dtype=np.uint64)
        if index is None:
            dim = int(self.embedder.dim)
            index = Index(ndim=dim, metric="cos", dtype="f32", connectivity=16)
        have = np.asarray(index.keys, dtype=np.uint64) if len(index) else np.zeros(0, np.uint64)
        gone = np.setdiff1d(have, keys)
        if len(gone):
            index.remove(gone)
        new = ~np.isin(keys, have)
        todo = [ids_names[int(j)][1] for j in np.flatnonzero(new)]
        for start in range(0, len(todo), 4096):
            part = np.flatnonzero(new)[start : start + 4096]
            vecs = np.asarray(self.embedder.embed_passages(todo[start : start + 4096]), np.float32)
            index.add(keys[part], vecs)
        if self.path is not None:
            tmp = self.path.with_suffix(".usearch.tmp")
            index.save(str(tmp))
            os.replace(tmp, self.path)
            meta = {"embedder": self.embedder.name, "gen": gen, "count": len(keys)}
            self.path.with_suffix(".json").write_text(json.dumps(meta))
        self.index = index
        return index

    def search(self, query: np.ndarray[Any, Any], count: int) -> list[tuple[int, float]]:
        """(entity id, cosine) of the (approximate) nearest `count` names."""
        index = self.ready()
        if not len(index):
            return []
        found = index.search(np.asarray(query, np.float32), count, exact=len(index) <= 4096)
        return [(int(k), 1.0 - float(d)) for k, d in zip(found.keys, found.distances, strict=True)]
