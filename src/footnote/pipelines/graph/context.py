"""What the Cypher model is shown: the schema (whole, or pruned to what the question
touches) and examples (the first ones, or those retrieved as most similar to the question
from the graph's library of checked question→Cypher pairs).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from footnote.models.base import Embedder
from footnote.store.graph.base import Example, GraphSpec
from footnote.textnorm import STOP_WORDS_EN, normalise

EXAMPLES_FILE = "examples.jsonl"
"""Checked pairs beside a graph's spec (written by `footnote graph synth --library`)."""
_WORD = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|_")


def _words(text: str) -> list[str]:
    """Lower-case word stems (4-letter prefixes, so 'directed' meets 'director') and Han
    characters; English stop words dropped."""
    out = []
    for w in _WORD.findall(normalise(_CAMEL.sub(" ", text))):
        if w in STOP_WORDS_EN:
            continue
        out.append(w[:4] if len(w) > 4 and w.isascii() else w)
    return out


def prune_spec(spec: GraphSpec, question: str, entity_labels: Iterable[str] = ()) -> GraphSpec:
    """The spec cut to the labels and relationships the question touches: labels named (or
    one of whose properties is named) or holding an aligned entity, relationship types
    named (with their end labels), and the relationships between kept labels. Every
    property of a kept label stays. Unchanged when nothing matches."""
    q = set(_words(question))
    keep = {lab for lab in entity_labels if lab in spec.nodes}
    for label, node in spec.nodes.items():
        if q & set(_words(label)) or any(q & set(_words(p)) for p in node.properties):
            keep.add(label)
    for name, rel in spec.relationships.items():
        if q & set(_words(name)) or any(q & set(_words(p)) for p in rel.properties):
            keep |= {rel.source, rel.target}
    if not keep:
        return spec
    if len(keep) == 1:  # one label: its neighbours are what a question about it walks to
        (only,) = keep
        for rel in spec.relationships.values():
            if only in (rel.source, rel.target):
                keep |= {rel.source, rel.target}
    rels = {n: r for n, r in spec.relationships.items() if r.source in keep and r.target in keep}
    nodes = {n: t for n, t in spec.nodes.items() if n in keep}
    return spec.model_copy(update={"nodes": nodes, "relationships": rels})


def similar_labels(spec: GraphSpec, question: str, embedder: Embedder, k: int = 2) -> list[str]:
    """The `k` node labels whose description (label, properties, relationship types) is most
    similar to the question by the embedder (the vector half of pruning: it also matches a
    Chinese question to English labels)."""
    labels = list(spec.nodes)
    if not labels:
        return []
    texts = []
    for label, node in spec.nodes.items():
        rels = [n for n, r in spec.relationships.items() if label in (r.source, r.target)]
        words = _CAMEL.sub(" ", " ".join([label, *node.properties, *rels]))
        texts.append(f"{label}: {words.lower()}")
    docs = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    q = np.asarray(embedder.embed_query(question), dtype=np.float32)
    norms = np.linalg.norm(docs, axis=1) * (float(np.linalg.norm(q)) or 1.0)
    scores = docs @ q / np.where(norms == 0, 1.0, norms)
    return [labels[i] for i in np.argsort(-scores)[:k]]


def example_library(spec: GraphSpec, folder: Path | None) -> list[Example]:
    """The graph's checked pairs: its spec's examples and intents, and `examples.jsonl`
    (`{"question", "cypher"}` lines, or chat-format lines as `graph synth` writes them)."""
    out = list(spec.examples)
    out += [Example(question=i.description, cypher=i.cypher) for i in spec.intents.values()]
    path = folder / EXAMPLES_FILE if folder is not None else None
    if path is not None and path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if "messages" in row:
                msgs = {m["role"]: m["content"] for m in row["messages"]}
                row = {"question": msgs.get("user", ""), "cypher": msgs.get("assistant", "")}
            if row.get("question") and row.get("cypher"):
                out.append(Example(question=row["question"], cypher=row["cypher"]))
    return out


class ExampleRetriever:
    """BM25 over the questions of an example library (word stems, Han characters)."""

    def __init__(self, examples: Sequence[Example]) -> None:
        self.examples = list(examples)
        self._docs = [Counter(_words(e.question)) for e in self.examples]
        n = len(self._docs)
        df: Counter[str] = Counter(w for d in self._docs for w in d)
        self._idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self._avg = sum(sum(d.values()) for d in self._docs) / max(1, n)

    def top(self, question: str, k: int) -> list[Example]:
        """The `k` examples whose questions are most similar to `question` (best first)."""
        q = set(_words(question))
        scored = []
        for i, d in enumerate(self._docs):
            length = sum(d.values()) or 1
            s = sum(
                self._idf.get(w, 0.0)
                * d[w]
                * 2.2
                / (d[w] + 1.2 * (0.25 + 0.75 * length / self._avg))
                for w in q
                if w in d
            )
            if s > 0:
                scored.append((-s, i))
        return [self.examples[i] for _, i in sorted(scored)[:k]]

    def for_pattern(self, question: str, cypher: str, k: int) -> list[Example]:
        """`k` examples for a query that failed: first those walking the same labels and
        relationships as `cypher` (most similar question first), then the most similar."""
        names = pattern_names(cypher)
        ranked = self.top(question, len(self.examples))
        ranked += [e for e in self.examples if e not in ranked]
        same = [e for e in ranked if names & pattern_names(e.cypher)] if names else []
        out: list[Example] = []
        for e in [*same, *ranked]:
            if all((e.question, e.cypher) != (o.question, o.cypher) for o in out):
                out.append(e)
        return out[:k]


_PATTERN = re.compile(r"[:|]\s*`?([A-Za-z_][A-Za-z0-9_]*)")


def pattern_names(cypher: str) -> set[str]:
    """The labels and relationship types a query walks (`(p:Person)-[:DIRECTED]->` →
    Person, DIRECTED)."""
    return set(_PATTERN.findall(cypher))


def examples_block(examples: Sequence[Example]) -> str:
    """Examples as prompt text."""
    lines = [f"Question: {e.question}\n```cypher\n{e.cypher}\n```" for e in examples]
    return "\n\n".join(lines) or "(none)"
