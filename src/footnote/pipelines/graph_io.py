"""Graphs on disk: the catalog of graph folders, importing CSV/JSON files with a declared
spec, the demo graphs (read from the shared data folder at run time: their repositories
state no licence, so footnote ships only its own spec files), and the library's own graph.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from footnote.config import GraphSettings
from footnote.errors import NotFound, UsageError
from footnote.index.cypher_parse import Token, tokenize
from footnote.index.graph_align import Entity, EntityIndex
from footnote.ingest.references import reference_keys
from footnote.store.base import DocumentStore
from footnote.store.graph_base import SPEC_FILENAME, GraphSpec, GraphStore, load_spec, save_spec
from footnote.types import Section

Rows = dict[str, list[dict[str, Any]]]
EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "graphs"
DEMOS = ("movies", "northwind")


class GraphCatalog:
    """Graph folders under `<workspace>/graphs` (or `graph.dir`); opens the configured backend."""

    def __init__(self, settings: GraphSettings, workspace: Path) -> None:
        self.settings = settings
        self.root = Path(settings.dir) if settings.dir else workspace / "graphs"

    def folder(self, name: str) -> Path:
        """The folder of graph `name` (validated name)."""
        if not name or not all(c.isalnum() or c in "-_" for c in name):
            raise UsageError(f"bad graph name {name!r}: letters, digits, - and _ only")
        return self.root / name

    def names(self) -> list[str]:
        """Graphs that have a spec file."""
        if not self.root.is_dir():
            return []
        return sorted(p.parent.name for p in self.root.glob(f"*/{SPEC_FILENAME}"))

    def spec(self, name: str) -> GraphSpec:
        """The spec of graph `name`."""
        path = self.folder(name) / SPEC_FILENAME
        if not path.exists():
            raise NotFound(f"no graph {name!r} (see `footnote graph ls`)")
        return load_spec(path)

    def open(self, name: str, *, writable: bool = False) -> GraphStore:
        """The graph's store: FalkorDB when `graph.url` says so, else embedded LadybugDB."""
        spec = self.spec(name)
        if self.settings.url:
            from footnote.store.graph_falkor import FalkorGraph

            return FalkorGraph(self.settings.url.rstrip("/") + "/" + name, spec)
        from footnote.store.graph_ladybug import LadybugGraph

        return LadybugGraph(self.folder(name), spec, writable=writable)

    def create(
        self, spec: GraphSpec, nodes: Rows, rels: Rows, *, replace: bool = False
    ) -> dict[str, int]:
        """Write the spec and import rows into a new graph (or a replaced one)."""
        folder = self.folder(spec.name)
        if (folder / SPEC_FILENAME).exists():
            if not replace:
                raise UsageError(f"graph {spec.name!r} exists: pass --replace to rebuild it")
            shutil.rmtree(folder)
        save_spec(spec.check(), folder / SPEC_FILENAME)
        store = self.open(spec.name, writable=True)
        try:
            return store.load(nodes, rels)
        finally:
            store.close()


def read_table(path: Path) -> list[dict[str, Any]]:
    """Rows of a CSV (header row) or JSON (list of objects, or JSON lines) file."""
    if path.suffix.lower() == ".csv":
        csv.field_size_limit(1 << 30)
        with path.open(encoding="utf-8-sig", newline="") as f:
            return [dict(r) for r in csv.DictReader(f)]
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        data = json.loads(text)
        return [dict(r) for r in data]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def rows_from_files(spec: GraphSpec, files: Sequence[Path]) -> tuple[Rows, Rows]:
    """Match files to tables by declared `file` name or `<Table>.csv/.json`, and read them."""
    by_name = {f.name: f for f in files}
    by_stem = {f.stem: f for f in files}

    def find(table: str, declared: str) -> Path | None:
        return by_name.get(declared) if declared else by_stem.get(table)

    nodes: Rows = {}
    rels: Rows = {}
    for label, node in spec.nodes.items():
        if (path := find(label, node.file)) is not None:
            nodes[label] = read_table(path)
    for name, rel in spec.relationships.items():
        if (path := find(name, rel.file)) is not None:
            rels[name] = read_table(path)
    if not nodes:
        raise UsageError("no file matches a node table of the spec (name files after tables)")
    return nodes, rels


# -- demo graphs ------------------------------------------------------------------------------
def demo_spec(name: str) -> GraphSpec:
    """footnote's own spec (schema, intents, examples) for a demo graph."""
    if name not in DEMOS:
        raise UsageError(f"unknown demo {name!r}; demos: {', '.join(DEMOS)}")
    return load_spec(EXAMPLES / name / SPEC_FILENAME)


def demo_data_dir(settings: GraphSettings) -> Path:
    """The shared `neo4j-example-graphs` folder (NotFound when absent)."""
    here = Path(__file__).resolve().parents[3]
    roots = (
        [Path(settings.data_dir)]
        if settings.data_dir
        else [here.parent / "shared" / "data", Path("shared/data")]
    )
    for root in roots:
        if (root / "neo4j-example-graphs").is_dir():
            return root / "neo4j-example-graphs"
    raise NotFound("neo4j-example-graphs not found: set graph.data_dir to the shared data folder")


def demo_rows(name: str, data: Path) -> tuple[Rows, Rows]:
    """Rows of a demo graph from the shared data folder."""
    if name == "movies":
        nodes, rels = parse_create_script((data / "movies" / "movies.cypher").read_text("utf-8"))
        return nodes, key_rows(demo_spec(name), rels)
    files = sorted((data / "northwind" / "import").glob("*.csv"))
    return rows_from_files(demo_spec(name), files)


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


# -- the library's own graph ----------------------------------------------------------------
LIBRARY_SPEC = EXAMPLES / "library" / SPEC_FILENAME


def _sections(
    source_id: str, secs: Sequence[Section], path: str, out: list[dict[str, Any]]
) -> None:
    for n, s in enumerate(secs):
        sid = f"{path}.{n}" if path else f"{source_id}:{n}"
        out.append({"id": sid, "title": s.title, "level": s.level, "paper": source_id})
        _sections(source_id, s.children, sid, out)


def library_rows(store: DocumentStore) -> tuple[Rows, Rows]:
    """Papers, sections, references and first authors of references, from the store."""
    papers: list[dict[str, Any]] = []
    sections: list[dict[str, Any]] = []
    refs: list[dict[str, Any]] = []
    authors: dict[str, dict[str, Any]] = {}
    has_section, cites, wrote = [], [], []
    for rec in store.list_sources():
        doc = store.get_document(rec.source.id)
        if doc is None:
            continue
        s = doc.source
        papers.append(
            {"id": s.id, "title": s.title, "uri": s.uri, "pages": s.pages, "lang": s.lang}
        )
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


def entity_index(
    store: GraphStore, embedder: Any, settings: GraphSettings, cache_dir: Path | None
) -> EntityIndex:
    """The alignment index of a graph: its named nodes plus the spec's extra aliases."""
    extra = store.spec.aliases
    ents = [
        Entity(label, key, name, tuple(aliases + extra.get(f"{label}:{key}", [])))
        for label, key, name, aliases in store.entities()
    ]
    return EntityIndex(
        ents, embedder, cache_dir=cache_dir,
        min_cosine=settings.min_cosine, margin=settings.ambiguity_margin,
    )  # fmt: skip
