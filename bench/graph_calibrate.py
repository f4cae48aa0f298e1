"""Fit the entity-alignment thresholds of graph QA (`graph.min_cosine`, `graph.ambiguity_margin`).

A mention that neither matches a name exactly nor by its words goes to the vector path: cosine
over the names' multilingual-e5 embeddings. `min_cosine` decides whether the best name is a
match at all; two candidates within `ambiguity_margin` of each other make the alignment
ambiguous (the pipeline drops such a vector match rather than guess). Both are fitted here
on a development set built from the demo graphs themselves, no model but the embedder:

- positives: every name of the fit graph (`movies`) written with one typo (a letter dropped
  or two swapped, a fixed seed), kept when exact and keyword lookup both miss it, so the
  vector path decides; right when its best candidate is the named node;
- negatives: names of the other demo graph (`northwind` products, companies, people) that
  exact and keyword lookup miss in the fit graph: a match there is a false alignment.

Rules (bounds stated in the record): `min_cosine` is the lowest threshold whose false-alignment
rate on the negatives is within `--false-bound` (0.05); at it, `ambiguity_margin` is the narrowest
margin that drops as many wrong matches as any margin dropping at most `--drop-bound` (0.10)
of the right ones (0 when no wrong match is left to drop). The fitted values are then applied to the held-out graph
(`northwind`, negatives from `movies`) and both are reported. `--write` stores the record in
`src/footnote/config/graph_calibration.json`, which `graph.min_cosine = None` and
`graph.ambiguity_margin = None` (the defaults) read.

    .venv/bin/python bench/graph_calibrate.py [--write]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from footnote.config import GraphSettings, load_settings
from footnote.index.graph.align import Entity, EntityIndex
from footnote.models import build_roles
from footnote.pipelines.graph.sources import demo_data_dir, demo_rows, demo_spec
from footnote.store.graph.base import GraphStore
from footnote.workspace import graph_catalog

OUT = Path(__file__).parent / "out"
RECORD = Path(__file__).resolve().parents[1] / "src/footnote/config/graph_calibration.json"
COSINES = [round(0.70 + 0.005 * i, 3) for i in range(59)]  # 0.70 … 0.99
MARGINS = [round(0.0025 * i, 4) for i in range(21)]  # 0 … 0.05


def typo(name: str, rng: random.Random) -> str:
    """`name` with one interior letter dropped or two neighbours swapped."""
    letters = [i for i, ch in enumerate(name) if ch.isalpha() and 0 < i < len(name) - 1]
    if not letters:
        return name
    i = rng.choice(letters)
    if rng.random() < 0.5 or i + 1 >= len(name) or not name[i + 1].isalpha():
        return name[:i] + name[i + 1 :]
    return name[:i] + name[i + 1] + name[i] + name[i + 2 :]


def index_of(store: GraphStore, embedder: Any) -> EntityIndex:
    ents = [Entity(label, key, name, tuple(aliases))
            for label, key, name, aliases in store.entities()]  # fmt: skip
    return EntityIndex(ents, embedder, min_cosine=-1.0, margin=0.0)


def vector_only(index: EntityIndex, mention: str) -> bool:
    """Exact and keyword lookup both miss `mention`: the vector path decides."""
    a = index.align(mention)
    return not a.candidates or a.candidates[0].method == "vector"


def scored(index: EntityIndex, mentions: list[str]) -> list[tuple[float, float, str]]:
    """(best cosine, second cosine, best node key) of each mention on the vector path."""
    mat = index.vectors()
    assert index.embedder is not None
    out = []
    for m in mentions:
        s = mat @ index.embedder.embed_query(m)
        top = np.argsort(-s)[:2]
        out.append((float(s[top[0]]), float(s[top[1]]) if len(top) > 1 else -1.0,
                    f"{index.entities[top[0]].label}:{index.entities[top[0]].key}"))  # fmt: skip
    return out


def dev_set(index: EntityIndex, other: EntityIndex, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    pos: list[tuple[str, str]] = []
    for e in index.entities:
        if len(e.name) < 6:
            continue
        m = typo(e.name, rng)
        if m != e.name and vector_only(index, m):
            pos.append((m, f"{e.label}:{e.key}"))
    neg = sorted(
        {e.name for e in other.entities if len(e.name) >= 4 and vector_only(index, e.name)}
    )
    return {"positives": pos, "negatives": neg,
            "pos_scores": scored(index, [m for m, _ in pos]), "neg_scores": scored(index, neg)}  # fmt: skip


def rates(dev: dict[str, Any], cos: float, margin: float) -> dict[str, Any]:
    """What the vector path does at (cos, margin): matches kept, right or wrong, and dropped."""
    right = wrong = dropped_right = dropped_wrong = 0
    for (best, second, key), (_, gold) in zip(dev["pos_scores"], dev["positives"], strict=True):
        if best < cos:
            continue
        ambiguous = second >= cos and second >= best - margin
        ok = key == gold
        if ambiguous:
            dropped_right += ok
            dropped_wrong += not ok
        else:
            right += ok
            wrong += not ok
    false = sum(1 for best, second, _ in dev["neg_scores"]
                if best >= cos and not (second >= cos and second >= best - margin))  # fmt: skip
    n_pos, n_neg = len(dev["positives"]), len(dev["negatives"])
    return {"min_cosine": cos, "ambiguity_margin": margin,
            "right": right, "wrong": wrong, "dropped_right": dropped_right,
            "dropped_wrong": dropped_wrong, "recall": round(right / max(1, n_pos), 4),
            "false_alignments": false, "false_rate": round(false / max(1, n_neg), 4)}  # fmt: skip


def fit(
    dev: dict[str, Any], false_bound: float, drop_bound: float
) -> tuple[float, float, list[Any]]:
    curve = [rates(dev, c, 0.0) for c in COSINES]
    cos = next((r["min_cosine"] for r in curve if r["false_rate"] <= false_bound), COSINES[-1])
    kept_right = rates(dev, cos, 0.0)["right"]
    allowed = [r for r in (rates(dev, cos, m) for m in MARGINS)
               if r["dropped_right"] <= drop_bound * max(1, kept_right)]  # fmt: skip
    most = max(r["dropped_wrong"] for r in allowed)
    margin = min(r["ambiguity_margin"] for r in allowed if r["dropped_wrong"] == most)
    return cos, margin, curve + [rates(dev, cos, m) for m in MARGINS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--false-bound", type=float, default=0.05)
    ap.add_argument("--drop-bound", type=float, default=0.10)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    OUT.mkdir(exist_ok=True)
    ws = OUT / "graph_calibrate_ws"
    base = GraphSettings(dir=str(ws))
    cat = graph_catalog(base, ws)
    for name in ("movies", "northwind"):
        if name not in cat.names():
            cat.create(demo_spec(name), *demo_rows(name, demo_data_dir(base, name)))
    roles = build_roles(load_settings(OUT / "graph_ws_settings").models)
    embedder = roles.embedder().fixed(())
    t0 = time.perf_counter()
    movies, northwind = (index_of(cat.open(n), embedder) for n in ("movies", "northwind"))
    fit_dev, test_dev = dev_set(movies, northwind, args.seed), dev_set(northwind, movies, args.seed)
    cos, margin, curve = fit(fit_dev, args.false_bound, args.drop_bound)
    record = {
        "fitted": True, "min_cosine": cos, "ambiguity_margin": margin,
        "false_alignment_bound": args.false_bound, "right_dropped_bound": args.drop_bound,
        "rule": "min_cosine: the lowest threshold whose false-alignment rate on the negatives is "
                "within the bound; ambiguity_margin: at it, the widest margin dropping at most "
                "the bound's share of the right matches",
        "dataset": "movies demo graph names with one typo each (positives; exact and keyword "
                   "lookup miss them) and northwind names (negatives), seed "
                   f"{args.seed}: {len(fit_dev['positives'])} positives, "
                   f"{len(fit_dev['negatives'])} negatives",
        "held_out": {"dataset": "northwind names with one typo, movies names as negatives",
                     **rates(test_dev, cos, margin), "n_positives": len(test_dev["positives"]),
                     "n_negatives": len(test_dev["negatives"])},
        "fit": {**rates(fit_dev, cos, margin), "n_positives": len(fit_dev["positives"]),
                "n_negatives": len(fit_dev["negatives"])},
        "embedder": embedder.name, "seconds": round(time.perf_counter() - t0, 1),
        "fitted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "curve": curve,
    }  # fmt: skip
    print(json.dumps({k: v for k, v in record.items() if k != "curve"}, indent=2))
    print("the settings before (0.83, 0.015) on the held-out graph:",
          json.dumps(rates(test_dev, 0.83, 0.015)))  # fmt: skip
    if args.write:
        RECORD.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {RECORD}")


if __name__ == "__main__":
    main()
