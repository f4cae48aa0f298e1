"""Settings of graph question answering (`graph.*`)."""

from __future__ import annotations

from pydantic import Field

from footnote.config.base import _Section


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
        "intent keywords and entity names (`rules`), or the model when bound (`auto`).",
    )
    answer: str = Field(
        "auto",
        pattern="^(auto|template|model)$",
        description="Compose answers from rows with the `compose` role (`model`), deterministic "
        "templates (`template`), or the model when bound (`auto`).",
    )
    min_confidence: float = Field(
        0.5, ge=0, le=1, description="Below this intent confidence, ask a clarifying question."
    )
    retries: int = Field(
        1, ge=0, le=3, description="Retries of the `cypher` role with the error before fallback."
    )
    min_cosine: float = Field(
        0.83, ge=-1, le=1, description="Least cosine for a vector entity match (e5 scale)."
    )
    ambiguity_margin: float = Field(
        0.015, ge=0, description="Vector candidates this close to the best one are ambiguous."
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
    retry_with_error: bool = Field(
        True,
        description="Retries show the rejected query and the error; off: a blind resample.",
    )
    choose: str = Field(
        "first",
        pattern="^(first|agreement)$",
        description="`first`: the first candidate that runs; `agreement`: all candidates run "
        "and the largest group with equal result sets wins.",
    )
    unsure: str = Field(
        "answer",
        pattern="^(answer|clarify|refuse)$",
        description="When candidates disagree or the chosen result is empty: answer anyway, "
        "ask back with the readings (`clarify`), or refuse.",
    )
    data_dir: str = Field(
        "",
        description="Folder of the shared datasets for `graph demo` (neo4j-example-graphs). "
        "Empty: `../shared/data` next to the source checkout, then `./shared/data`.",
    )
