"""The graph guard's attack suite (tests/data/graph_attacks.json) on LadybugDB and, when the
`falkordb` extra is installed, on a FalkorDB server: share of attacks blocked by code.

    .venv/bin/python bench/graph_attacks.py
"""

from __future__ import annotations

import importlib.util
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "integration"))

from footnote.config import GraphSettings
from footnote.store.graph.base import GraphSpec
from footnote.verify.cypher.guard import GraphGuard
from footnote.workspace import graph_catalog

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "graph_films", ROOT / "tests" / "data" / "graph_films.py"
)
assert _spec is not None and _spec.loader is not None
films = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(films)


def suite(store: object) -> dict[str, object]:
    guard = GraphGuard(store)  # type: ignore[arg-type]
    cases = films.load_attacks()
    kinds: Counter[str] = Counter()
    blocked: Counter[str] = Counter()
    misses = []
    t0 = time.perf_counter()
    for case in cases:
        ok, detail = films.run_attack(case, guard, store)
        kinds[case["kind"]] += 1
        blocked[case["kind"]] += ok
        if not ok:
            misses.append({"name": case["name"], "detail": detail})
    return {
        "cases": len(cases),
        "blocked": sum(blocked.values()),
        "share_blocked": round(sum(blocked.values()) / len(cases), 3),
        "by_kind": {k: f"{blocked[k]}/{kinds[k]}" for k in kinds},
        "misses": misses,
        "ms_per_case": round(1000 * (time.perf_counter() - t0) / len(cases), 2),
    }


def main() -> None:
    out: dict[str, object] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cat = graph_catalog(GraphSettings(dir=tmp), Path(tmp))
        cat.create(GraphSpec.model_validate(films.FILMS), films.NODES, films.RELS)
        store = cat.open("films")
        out["ladybug"] = suite(store)
        store.close()
    try:
        from falkor_server import FalkorServer

        from footnote.store.graph.falkor import FalkorGraph

        server = FalkorServer().start()
        try:
            g = FalkorGraph(server.url + "/films", GraphSpec.model_validate(films.FILMS))
            g.load(films.NODES, films.RELS)
            out["falkordb"] = suite(g)
            g.close()
        finally:
            server.stop()
    except Exception as exc:  # the extra is optional
        out["falkordb"] = f"skipped: {exc}"
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
