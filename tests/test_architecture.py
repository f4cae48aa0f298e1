"""The layout of design §3, enforced: imports point down the layers (relative imports too),
siblings on one layer stay apart, each job has its own package, only the composition root
constructs backends, and files stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "footnote"
MAX_LINES = 600

# Layer of each top-level module or package under footnote/. L0 modules may import the
# L0 modules listed before them (errors <- types <- access <- number_words <- numbers <-
# textnorm <- events <- serialize).
LAYERS: dict[str, float] = {
    "errors": 0.0,
    "types": 0.1,
    "access": 0.11,
    "labels": 0.12,
    "number_words": 0.14,
    "numbers": 0.15,
    "textnorm": 0.2,
    "events": 0.3,
    "serialize": 0.4,
    "config": 1,
    "prompts": 1,
    "examples": 1,
    "ingest": 2,
    "store": 2,
    "models": 2,
    "jobs": 2,
    "index": 3,
    "verify": 3,
    "agent": 4,
    "pipelines": 5,
    "workspace": 6,
    "server": 7,
    "web": 7,
    "eval": 7,
    "mcp": 7,
    "cli": 8,
}

# One package per job (design §3): a job's files live together, not in sibling folders.
JOB_PACKAGES = {
    "pipelines": {"ask", "chat", "export", "graph", "reproduce", "research", "review"},
    "store": {"graph", "sqlite"},
    "ingest": {"web"},
    "index": {"graph"},
    "verify": {"cypher"},
}
# The only plain modules allowed directly in pipelines/ (shared by the jobs).
PIPELINE_MODULES = {"__init__", "memory", "trace"}

# Backend classes and factories: constructed only by the composition root (`footnote.workspace`)
# or inside the package that defines them (a package may build its own parts).
BACKENDS: dict[str, str] = {
    "SqliteStore": "store",
    "SqliteAuthStore": "store",
    "SqliteChatStore": "store",
    "SqliteEventStore": "store",
    "SqliteRunStore": "store",
    "SqliteFeedbackStore": "store",
    "SqliteResearchStore": "store",
    "SqliteReviewStore": "store",
    "LadybugGraph": "store",
    "FalkorGraph": "store",
    "GraphCatalog": "store",
    "Indexer": "index",
    "Searcher": "index",
    "build_roles": "models",
    "ModelRoles": "models",
    "LlamaCppChatModel": "models",
    "OpenAICompatChatModel": "models",
    "OpenAICompatEmbedder": "models",
    "E5Embedder": "models",
    "WordLlamaEmbedder": "models",
    "Fetcher": "ingest",
    "SearxngSearch": "ingest",
    "BraveSearch": "ingest",
    "OpenAlexSearch": "ingest",
    "ArxivSearch": "ingest",
    "SemanticScholarSearch": "ingest",
    "LicensedDatabase": "ingest",
    "RedisWindow": "pipelines",
    "SqliteLedger": "jobs",
    "RedisLedger": "jobs",
    "JobQueue": "jobs",
    "LocalWindow": "pipelines",
}
COMPOSITION_ROOT = "workspace"


def _unit_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _module_of(path: Path) -> list[str]:
    """`footnote.a.b` of a file, as parts (a package's `__init__` is the package)."""
    parts = ["footnote", *path.relative_to(SRC).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _absolute(path: Path, node: ast.ImportFrom) -> str:
    """The absolute module a `from … import` names, relative imports resolved."""
    if node.level == 0:
        return node.module or ""
    package = _module_of(path)
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _imported_units(path: Path, tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [_absolute(path, node)]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "footnote" and len(parts) > 1:
                found.add(parts[1])
    return found


PY_FILES = sorted(p for p in SRC.rglob("*.py") if p.name != "__init__.py" or p.parent != SRC)


def test_every_unit_has_a_layer() -> None:
    units = {_unit_of(p) for p in PY_FILES}
    assert units <= set(LAYERS), f"modules without a layer: {units - set(LAYERS)}"


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_point_down(path: Path) -> None:
    unit = _unit_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for target in _imported_units(path, tree) - {unit}:
        assert target in LAYERS, f"{path}: imports unknown footnote.{target}"
        assert LAYERS[target] < LAYERS[unit], (
            f"{path.relative_to(SRC)} (layer {LAYERS[unit]}) imports footnote.{target} "
            f"(layer {LAYERS[target]}): imports must point down, siblings stay apart"
        )


def test_relative_imports_are_resolved() -> None:
    """The resolver the layer check relies on: a relative import names its absolute module."""
    init = SRC / "verify" / "cypher" / "__init__.py"
    module = SRC / "verify" / "cypher" / "guard.py"
    rel = ast.parse("from ..checks import x\nfrom . import parse\nfrom ...types import y").body
    assert [_absolute(module, n) for n in rel] == [  # type: ignore[arg-type]
        "footnote.verify.checks",
        "footnote.verify.cypher",
        "footnote.types",
    ]
    assert _absolute(init, rel[1]) == "footnote.verify.cypher"  # type: ignore[arg-type]
    upward = ast.parse("from ...pipelines import ask").body[0]
    assert _imported_units(module, ast.Module([upward], [])) == {"pipelines"}


@pytest.mark.parametrize("layer", sorted(JOB_PACKAGES))
def test_each_job_has_its_own_package(layer: str) -> None:
    folder = SRC / layer
    packages = {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}
    assert JOB_PACKAGES[layer] <= packages, f"{layer}/ lacks {JOB_PACKAGES[layer] - packages}"
    for job in JOB_PACKAGES[layer]:
        strays = sorted(p.name for p in folder.glob(f"{job}_*.py"))
        assert not strays, f"{layer}/{strays} belong in {layer}/{job}/"


def test_pipelines_hold_only_job_packages_and_shared_memory() -> None:
    modules = {p.stem for p in (SRC / "pipelines").glob("*.py")}
    assert modules <= PIPELINE_MODULES, (
        f"pipelines/ modules outside a job: {modules - PIPELINE_MODULES}"
    )


def test_graph_code_lives_in_its_homes() -> None:
    homes = {("store", "graph"), ("index", "graph"), ("verify", "cypher"), ("pipelines", "graph")}
    strays = [
        str(p.relative_to(SRC))
        for p in PY_FILES
        if any(w in p.stem for w in ("graph", "cypher"))
        and tuple(p.relative_to(SRC).parts[:2]) not in homes
        and _unit_of(p) not in ("eval", "cli", "server", "workspace", "mcp")
        # the graph answer checks, and the graph section of the settings
        and str(p.relative_to(SRC)) not in ("verify/graph_answer.py", "config/graph.py")
    ]
    assert not strays, f"graph modules outside store/graph, index/graph, verify/cypher: {strays}"


def _constructed(tree: ast.AST) -> list[tuple[str, int]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            if name in BACKENDS:
                out.append((name, node.lineno))
    return out


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_only_the_composition_root_constructs_backends(path: Path) -> None:
    unit = _unit_of(path)
    if unit == COMPOSITION_ROOT:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = [(n, line) for n, line in _constructed(tree) if BACKENDS[n] != unit]
    assert not bad, (
        f"{path.relative_to(SRC)} constructs {bad}: backends are chosen in footnote.workspace"
    )


def test_the_backend_check_can_fail() -> None:
    tree = ast.parse("store = SqliteStore(path)\nroles = models.build_roles(settings)")
    assert _constructed(tree) == [("SqliteStore", 1), ("build_roles", 2)]


@pytest.mark.parametrize("path", PY_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_file_size_budget(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(SRC)} has {lines} lines; split it"
