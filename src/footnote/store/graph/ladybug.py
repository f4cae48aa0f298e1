"""LadybugDB (maintained Kuzu fork), the embedded graph: typed schema, read-only query handle.

Generated queries run on a `Database(read_only=True)` connection with a timeout, so even a
query that slipped past the guard cannot write. Writes (import) use a separate, short-lived
writable handle. EXPLAIN compiles against the typed schema, so unknown labels and properties
fail before anything runs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from footnote.errors import ProviderUnavailable, StoreError
from footnote.store.graph.base import GraphQueryError, GraphRows, GraphSpec, coerce, plain_value

DB_FILENAME = "db.lbug"
_BATCH = 500


_EXPLAIN = "EXPLAIN "
_FIRST_LINE_AT = re.compile(r"\(line: 1, offset: (\d+)\)")


def _without_explain(message: str) -> str:
    """The engine's message about `EXPLAIN <query>` as if about the query: the quoted first
    line, its offset and caret lose the prefix (a model retrying from the message would
    otherwise copy the EXPLAIN into its query)."""
    quoted = f'\n"{_EXPLAIN}'
    if quoted not in message:
        return message
    head, _, rest = message.partition(quoted)
    head = _FIRST_LINE_AT.sub(
        lambda m: f"(line: 1, offset: {max(0, int(m.group(1)) - len(_EXPLAIN))})", head
    )
    line, nl, caret = rest.partition("\n")
    if caret.startswith(" " * (len(_EXPLAIN) + 1)):
        caret = caret[len(_EXPLAIN) :]
    return f'{head}\n"{line}{nl}{caret}'


def _ladybug() -> Any:
    try:
        import ladybug
    except ImportError as exc:  # pragma: no cover - core dependency
        raise ProviderUnavailable("ladybug is not installed: pip install ladybug") from exc
    return ladybug


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class LadybugGraph:
    """One graph folder opened with LadybugDB; read-only unless `writable`."""

    backend = "ladybug"

    def __init__(
        self, folder: Path, spec: GraphSpec, *, writable: bool = False, path: Path | None = None
    ) -> None:
        """`path`: an existing database read in place (an attached graph), not the folder's."""
        self.folder = folder
        self.spec = spec
        self.writable = writable
        lb = _ladybug()
        folder.mkdir(parents=True, exist_ok=True)
        if path is not None and not path.exists():
            raise StoreError(f"no LadybugDB database at {path}")
        path = path or folder / DB_FILENAME
        if not writable and not path.exists():
            raise StoreError(f"graph {spec.name!r} has no database yet: import data first")
        try:
            self._db = lb.Database(str(path), read_only=not writable)
            self._conn = lb.Connection(self._db)
        except RuntimeError as exc:
            raise StoreError(f"cannot open graph {spec.name!r}: {exc}") from exc

    # -- queries ----------------------------------------------------------------------------
    def explain(self, cypher: str, params: Mapping[str, Any]) -> None:
        """Compile `cypher` (EXPLAIN); GraphQueryError on syntax or schema errors."""
        try:
            self._conn.execute(_EXPLAIN + cypher, dict(params))
        except RuntimeError as exc:
            raise GraphQueryError(_without_explain(str(exc))) from exc

    def query(
        self, cypher: str, params: Mapping[str, Any], *, limit: int, timeout_s: float
    ) -> GraphRows:
        """Run on this (read-only) connection with a timeout; keep at most `limit` rows."""
        t0 = time.perf_counter()
        self._conn.set_query_timeout(max(1, int(timeout_s * 1000)))
        try:
            result = self._conn.execute(cypher, dict(params))
            columns = tuple(result.get_column_names())
            rows: list[tuple[Any, ...]] = []
            truncated = False
            while result.has_next():
                if len(rows) >= limit:
                    truncated = True
                    break
                rows.append(tuple(plain_value(v) for v in result.get_next()))
            result.close()
        except RuntimeError as exc:
            raise GraphQueryError(str(exc)) from exc
        return GraphRows(columns, tuple(rows), truncated, time.perf_counter() - t0)

    def entities(self) -> list[tuple[str, str, str, list[str]]]:
        """(label, key, name, aliases) of every node whose label declares a name property."""
        out: list[tuple[str, str, str, list[str]]] = []
        for label, node in self.spec.nodes.items():
            if not node.name:
                continue
            alias = f", n.{_quote(node.aliases)} AS a" if node.aliases else ""
            q = f"MATCH (n:{_quote(label)}) RETURN n.{_quote(node.key)} AS k, n.{_quote(node.name)} AS n{alias}"
            for row in self.query(q, {}, limit=10_000_000, timeout_s=60).rows:
                aliases = [str(a) for a in (row[2] or [])] if node.aliases else []
                if row[1] is not None:
                    out.append((label, str(row[0]), str(row[1]), aliases))
        return out

    # -- import -----------------------------------------------------------------------------
    def _create_schema(self) -> None:
        existing = {str(r[1]) for r in self._run("CALL show_tables() RETURN *", {}) if len(r) > 1}
        for label, node in self.spec.nodes.items():
            if label in existing:
                continue
            cols = ", ".join(f"{_quote(p)} {t}" for p, t in node.properties.items())
            self._run(
                f"CREATE NODE TABLE {_quote(label)}({cols}, PRIMARY KEY({_quote(node.key)}))", {}
            )
        for name, rel in self.spec.relationships.items():
            if name in existing:
                continue
            cols = "".join(f", {_quote(p)} {t}" for p, t in rel.properties.items())
            self._run(
                f"CREATE REL TABLE {_quote(name)}(FROM {_quote(rel.source)} "
                f"TO {_quote(rel.target)}{cols})",
                {},
            )

    def _run(self, cypher: str, params: Mapping[str, Any]) -> list[list[Any]]:
        try:
            result = self._conn.execute(cypher, dict(params))
            rows: list[list[Any]] = result.get_all()
            return rows
        except RuntimeError as exc:
            raise StoreError(f"ladybug: {exc}") from exc

    def load(
        self,
        nodes: Mapping[str, Sequence[Mapping[str, Any]]],
        rels: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> dict[str, int]:
        """Create tables and insert rows in batches (needs a writable handle)."""
        if not self.writable:
            raise StoreError("graph opened read-only: cannot import")
        self._create_schema()
        counts: dict[str, int] = {}
        for label, rows in nodes.items():
            props = self.spec.nodes[label].properties
            sets = ", ".join(f"{_quote(p)}: r.{_quote(p)}" for p in props)
            q = f"UNWIND $rows AS r CREATE (:{_quote(label)} {{{sets}}})"
            clean = [{p: coerce(row.get(p), t) for p, t in props.items()} for row in rows]
            for i in range(0, len(clean), _BATCH):
                self._run(q, {"rows": clean[i : i + _BATCH]})
            counts[label] = len(clean)
        for name, rows in rels.items():
            rel = self.spec.relationships[name]
            src, dst = self.spec.nodes[rel.source], self.spec.nodes[rel.target]
            sets = ", ".join(f"{_quote(p)}: r.{_quote(p)}" for p in rel.properties)
            sets = f" {{{sets}}}" if sets else ""
            q = (
                f"UNWIND $rows AS r MATCH (a:{_quote(rel.source)}), (b:{_quote(rel.target)}) "
                f"WHERE a.{_quote(src.key)} = r.__from AND b.{_quote(dst.key)} = r.__to "
                f"CREATE (a)-[:{_quote(name)}{sets}]->(b)"
            )
            clean = [
                {
                    "__from": coerce(row.get(rel.from_column), src.properties[src.key]),
                    "__to": coerce(row.get(rel.to_column), dst.properties[dst.key]),
                    **{p: coerce(row.get(p), t) for p, t in rel.properties.items()},
                }
                for row in rows
            ]
            for i in range(0, len(clean), _BATCH):
                self._run(q, {"rows": clean[i : i + _BATCH]})
            counts[name] = len(clean)
        return counts

    def close(self) -> None:
        """Close the connection and database."""
        self._conn.close()
        self._db.close()
