"""Where graph rows come from: the demo graphs (bundled in compact form, see
`examples/ATTRIBUTION.md`; `graph.data_dir` may point at the upstream files instead), Neo4j
`CREATE` scripts, and the library's own graph of papers, sections and references.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from footnote.access import personal_group, readable_by, shown_source
from footnote.config import GraphSettings
from footnote.errors import NotFound, UsageError
from footnote.examples import GRAPHS_DIR
from footnote.ingest.references import reference_keys
from footnote.store.base import DocumentStore
from footnote.store.graph.base import SPEC_FILENAME, GraphSpec, load_spec
from footnote.store.graph.catalog import Rows
from footnote.store.graph.files import rows_from_files, rows_from_tables
from footnote.types import Section
from footnote.verify.cypher.parse import Token, tokenize

DEMOS = ("movies", "northwind")


def demo_spec(name: str) -> GraphSpec:
    """footnote's own spec (schema, intents, examples) for a demo graph."""
    if name not in DEMOS:
        raise UsageError(f"unknown demo {name!r}; demos: {', '.join(DEMOS)}")
    return load_spec(GRAPHS_DIR / name / SPEC_FILENAME)


DEMO_UPSTREAM = {
    "movies": ("neo4j-graph-examples/movies", "scripts/movies.cypher", "movies/movies.cypher"),
    "northwind": ("neo4j-graph-examples/northwind", "import/*.csv", "northwind/import/"),
}
"""Where each demo graph's data comes from (repository on GitHub, its file, where it goes)."""
DEMO_BUNDLED = {"movies": "movies.cypher.gz", "northwind": "northwind.json.gz"}
"""The compact copy of each demo's data shipped in `examples/graphs/<demo>/`."""


def demo_data_dir(settings: GraphSettings, name: str = "movies") -> Path | None:
    """The `neo4j-example-graphs` folder under `graph.data_dir` when it holds demo `name`'s
    upstream files (read instead of the bundled copy); None: the bundled copy is used."""
    if name not in DEMOS:
        raise UsageError(f"unknown demo {name!r}; demos: {', '.join(DEMOS)}")
    if not settings.data_dir:
        return None
    folder = Path(settings.data_dir) / "neo4j-example-graphs"
    return folder if (folder / DEMO_UPSTREAM[name][2]).exists() else None


def demo_rows(name: str, data: Path | None = None) -> tuple[Rows, Rows]:
    """Rows of a demo graph: from the upstream files under `data` (a `neo4j-example-graphs`
    folder), or from the bundled copy when `data` is None."""
    spec = demo_spec(name)
    bundled = GRAPHS_DIR / name / DEMO_BUNDLED[name]
    if data is None and not bundled.exists():
        raise NotFound(f"the bundled data of the {name} demo ({bundled}) is missing")
    if name == "movies":
        path = data / "movies" / "movies.cypher" if data is not None else None
        text = path.read_text("utf-8") if path else gzip.decompress(bundled.read_bytes()).decode()
        nodes, rels = parse_create_script(text)
        return nodes, key_rows(spec, rels)
    if data is not None:
        return rows_from_files(spec, sorted((data / "northwind" / "import").glob("*.csv")))
    tables: dict[str, Any] = json.loads(gzip.decompress(bundled.read_bytes()))["tables"]

    def rows(table: str) -> list[dict[str, Any]]:
        cols = tables[table]["columns"]
        return [dict(zip(cols, r, strict=True)) for r in tables[table]["rows"]]

    return rows_from_tables(spec, sorted(tables), rows)


def _literal(toks: list[Token], i: int) -> tuple[Any, int]:
    t = toks[i]
    if t.kind == "string":
        return t.value, i + 1
    if t.kind == "number":
        return (float(t.text) if "." in t.text else int(t.text)), i + 1
    if t.text == "-" and toks[i + 1].kind == "number":
        v, j = _literal(toks, i + 1)
        return -v, j
    if t.text == "[":
        out, i = [], i + 1
        while toks[i].text != "]":
            v, i = _literal(toks, i)
            out.append(v)
            if toks[i].text == ",":
                i += 1
        return out, i + 1
    raise UsageError(f"unsupported literal {t.text!r} in CREATE script")


def _props(toks: list[Token], i: int) -> tuple[dict[str, Any], int]:
    props: dict[str, Any] = {}
    i += 1
    while toks[i].text != "}":
        key = toks[i].value or toks[i].text
        props[key], i = _literal(toks, i + 2)
        if toks[i].text == ",":
            i += 1
    return props, i + 1


def parse_create_script(text: str) -> tuple[Rows, Rows]:
    """Nodes and relationships of a Neo4j `CREATE (v:Label {…})`, `(a)-[:T {…}]->(b)` script."""
    toks = tokenize(text)
    var_key: dict[str, Any] = {}
    nodes: Rows = {}
    rels: Rows = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        if (
            t.text == "("
            and i + 4 < len(toks)
            and toks[i + 2].text == ":"
            and toks[i + 4].text == "{"
        ):
            props, j = _props(toks, i + 4)
            var_key[toks[i + 1].text] = props
            nodes.setdefault(toks[i + 3].text, []).append(props)
            i = j + 1
        elif (
            t.text == "("
            and i + 7 < len(toks)
            and toks[i + 2].text == ")"
            and toks[i + 3].text == "-"
        ):
            j = i + 6  # ( a ) - [ : TYPE
            typ = toks[j].text
            props, j = _props(toks, j + 1) if toks[j + 1].text == "{" else ({}, j + 1)
            src, dst = toks[i + 1].text, toks[j + 3].text  # ] -> ( b )
            row = {"from": var_key[src], "to": var_key[dst], **props}
            rels.setdefault(typ, []).append(row)
            i = j + 5
        else:
            i += 1
    return nodes, rels


def key_rows(spec: GraphSpec, rels: Rows) -> Rows:
    """Replace node property dicts in `from`/`to` by their label's key value."""
    out: Rows = {}
    for name, rows in rels.items():
        rel = spec.relationships[name]
        fk, tk = spec.nodes[rel.source].key, spec.nodes[rel.target].key
        out[name] = [{**r, "from": r["from"][fk], "to": r["to"][tk]} for r in rows]
    return out


# -- the library's own graph ---------------------------------------------------------------
LIBRARY_SPEC = GRAPHS_DIR / "library" / SPEC_FILENAME


def _sections(
    source_id: str, secs: Sequence[Section], path: str, out: list[dict[str, Any]]
) -> None:
    for n, s in enumerate(secs):
        sid = f"{path}.{n}" if path else f"{source_id}:{n}"
        out.append({"id": sid, "title": s.title, "level": s.level, "paper": source_id})
        _sections(source_id, s.children, sid, out)


NOBODY = personal_group("")
"""An ACL group no user has (user ids are never empty): only unrestricted callers pass."""


@dataclass(frozen=True)
class LibraryGraph:
    """The library graph as one caller may see it: rows, and the labels and ACL it carries."""

    nodes: Rows
    rels: Rows
    labels: tuple[str, ...]
    acl_groups: tuple[str, ...]

    def spec(self, name: str) -> GraphSpec:
        """The library spec under `name`, carrying this copy's labels and ACL groups."""
        return library_spec().model_copy(
            update={"name": name, "labels": list(self.labels), "acl_groups": list(self.acl_groups)}
        )


def library_graph(store: DocumentStore, groups: tuple[str, ...] | None) -> LibraryGraph:
    """The library graph of the sources a caller with `groups` may read (`readable_by`;
    None: every source). It carries the union of their labels, and as ACL the groups that
    may read every one of them (the intersection of the restricted sources' ACLs; public
    when all are public; `NOBODY` — unrestricted callers only — when no group is in all)."""
    sources = [r.source for r in store.list_sources() if readable_by(r.source, groups)]
    nodes, rels = library_rows(store, [s.id for s in sources])
    labels = tuple(sorted({lab for s in sources for lab in s.labels}))
    acls = [set(s.acl_groups) for s in sources if s.acl_groups]
    common = set.intersection(*acls) if acls else set()
    acl = tuple(sorted(common)) if common else (NOBODY,) if acls else ()
    return LibraryGraph(nodes, rels, labels, acl)


def library_rows(
    store: DocumentStore, source_ids: Sequence[str] | None = None
) -> tuple[Rows, Rows]:
    """Papers, sections, references and first authors of references, from the store (only
    the sources `source_ids` when given: see `library_graph` for the visibility rule)."""
    wanted = set(source_ids) if source_ids is not None else None
    papers: list[dict[str, Any]] = []
    sections: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    authors: dict[str, dict[str, Any]] = {}
    has_section, cites, wrote = [], [], []
    for rec in store.list_sources():
        if wanted is not None and rec.source.id not in wanted:
            continue
        doc = store.get_document(rec.source.id)
        if doc is None:
            continue
        s = doc.source
        uri = shown_source(s, ()).uri  # a file name, never a server path: graphs are shared
        papers.append({"id": s.id, "title": s.title, "uri": uri, "pages": s.pages, "lang": s.lang})
        secs: list[dict[str, Any]] = []
        _sections(s.id, doc.sections, "", secs)
        sections += secs
        has_section += [{"from": s.id, "to": x["id"]} for x in secs]
        for b in doc.blocks:
            if b.kind != "reference":
                continue
            _, surname, year = reference_keys(b.text)
            refs.append(
                {"id": b.id, "text": b.text, "year": int(year) if year else None, "page": b.page}
            )
            cites.append({"from": s.id, "to": b.id})
            if surname:
                authors.setdefault(surname, {"name": surname.title()})
                wrote.append({"from": surname.title(), "to": b.id})
    nodes: Rows = {"Paper": papers, "Section": sections, "Reference": refs,
                   "Author": list(authors.values())}  # fmt: skip
    return nodes, {"HAS_SECTION": has_section, "CITES": cites, "FIRST_AUTHOR_OF": wrote}


def library_spec() -> GraphSpec:
    """The spec of the library graph."""
    return load_spec(LIBRARY_SPEC)


def spec_with_name(spec: GraphSpec, name: str) -> GraphSpec:
    """A copy of `spec` under another graph name."""
    return spec.model_copy(update={"name": name})
