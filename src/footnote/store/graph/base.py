"""Graph stores behind one protocol, and the graph spec file that declares a graph.

A graph lives in a folder `<workspace>/graphs/<name>/` holding `graph.json` (a `GraphSpec`:
node and relationship tables with typed properties, which property names an entity and which
holds its aliases, row-level restrictions, whitelisted intents with parameterised Cypher
templates, and question→Cypher examples) beside the engine's files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from footnote.errors import ConfigError, StoreError

SPEC_FILENAME = "graph.json"
TYPES = ("STRING", "INT64", "DOUBLE", "BOOL", "STRING[]", "INT64[]", "DOUBLE[]")
_TYPE_ALIASES = {
    "STR": "STRING",
    "TEXT": "STRING",
    "INT": "INT64",
    "INTEGER": "INT64",
    "FLOAT": "DOUBLE",
    "NUMBER": "DOUBLE",
    "BOOLEAN": "BOOL",
    "LIST": "STRING[]",
}


class GraphQueryError(StoreError):
    """A graph query failed to compile or run (the message goes back to the model)."""


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _norm_type(t: str) -> str:
    up = t.strip().upper()
    up = _TYPE_ALIASES.get(up, up)
    if up not in TYPES:
        raise ValueError(f"unknown property type {t!r}; use one of {', '.join(TYPES)}")
    return up


class NodeTable(_Spec):
    """A node label: typed properties, the primary key, and the entity name/alias properties."""

    properties: dict[str, str] = Field(description="property → type (STRING, INT64, …)")
    key: str = Field(description="Primary-key property.")
    name: str = Field("", description="Property that names an entity for alignment (empty: none).")
    aliases: str = Field("", description="A STRING[] property holding aliases (optional).")
    file: str = Field("", description="Import file name (default `<Label>.csv` or `.json`).")

    @field_validator("properties")
    @classmethod
    def _types(cls, v: dict[str, str]) -> dict[str, str]:
        return {k: _norm_type(t) for k, t in v.items()}


class RelTable(_Spec):
    """A relationship type between two node labels, with typed properties."""

    source: str = Field(alias="from", description="Start label.")
    target: str = Field(alias="to", description="End label.")
    properties: dict[str, str] = Field(default_factory=dict)
    file: str = Field("", description="Import file name (default `<TYPE>.csv` or `.json`).")
    from_column: str = Field("from", description="Column holding the start node's key.")
    to_column: str = Field("to", description="Column holding the end node's key.")

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("properties")
    @classmethod
    def _types(cls, v: dict[str, str]) -> dict[str, str]:
        return {k: _norm_type(t) for k, t in v.items()}


class Restriction(_Spec):
    """Rows of `label` are visible only where `property` is in the principal's `attribute`."""

    property: str
    attribute: str


class ValueSlot(_Spec):
    """A typed non-entity template parameter ("films after {year}"), read from the question
    by code (`pipelines.graph.slots`), validated and bound as `$name`; never a model's text."""

    type: Literal["INT64", "DOUBLE", "YEAR", "DATE", "BOOL", "ENUM"]
    cues: list[str] = Field(
        default_factory=list,
        description="Words next to the value ('after', '之后'); for BOOL the words meaning true. "
        "Empty: the first value of the type anywhere in the question (ENUM: any listed value).",
    )
    false_cues: list[str] = Field(default_factory=list, description="BOOL: words meaning false.")
    values: list[str] = Field(default_factory=list, description="ENUM: the allowed values.")
    property: str = Field(
        "", description="ENUM: `Label.property` whose stored values are the allowed ones."
    )
    min: float | None = Field(None, description="Smallest allowed number or year.")
    max: float | None = Field(None, description="Largest allowed number or year.")


class Intent(_Spec):
    """A whitelisted question kind answered by a parameterised Cypher template."""

    description: str
    cypher: str = Field(description="Template; entities arrive as `$param`, never spliced.")
    params: dict[str, str] = Field(default_factory=dict, description="param → node label")
    values: dict[str, ValueSlot] = Field(
        default_factory=dict, description="param → typed non-entity slot (numbers, years, …)"
    )
    keywords: list[str] = Field(default_factory=list, description="Rule cues (any language).")
    answer: str = Field("", description="Sentence template over a row's columns, e.g. `{title}`.")
    answer_zh: str = Field(
        "",
        description="The same for a Chinese question, e.g. `{title}（{released} 年）。`; "
        "empty: the rows in a generic Chinese rendering.",
    )


class Example(_Spec):
    """A question with its Cypher, shown to the generating model."""

    question: str
    cypher: str


class GraphSpec(_Spec):
    """Everything declared about one graph."""

    name: str
    description: str = ""
    nodes: dict[str, NodeTable]
    relationships: dict[str, RelTable] = Field(default_factory=dict)
    restricted: dict[str, Restriction] = Field(default_factory=dict)
    intents: dict[str, Intent] = Field(default_factory=dict)
    examples: list[Example] = Field(default_factory=list)
    procedures: list[str] = Field(default_factory=list, description="CALL-able procedures.")
    aliases: dict[str, list[str]] = Field(
        default_factory=dict, description="`Label:key` → extra aliases (any language)."
    )
    labels: list[str] = Field(
        default_factory=list,
        description="Licence/sensitivity labels of the graph's data, as a source carries them "
        "(`no-external-model` keeps its rows, names and questions off external models).",
    )
    acl_groups: list[str] = Field(
        default_factory=list,
        description="Groups that may use the graph (empty: everyone), as a source's ACL.",
    )
    database: str = Field(
        "",
        description="An existing database this graph reads in place (`footnote graph attach`): "
        "a LadybugDB file or a `falkor://host:port/graph` URL; empty: the graph folder's own.",
    )
    samples: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="Label → text property → a few of its values, set at import (`sampled`) "
        "and shown to the models with the schema ('USA', not 'United States'); never for a "
        "restricted label.",
    )

    def readable_by(self, user_groups: tuple[str, ...] | None) -> bool:
        """The visibility rule of sources (`access.readable_by`) applied to this graph:
        unrestricted callers (None) and public graphs (no groups) pass, else groups meet."""
        return (
            user_groups is None
            or not self.acl_groups
            or bool(set(self.acl_groups) & set(user_groups))
        )

    def check(self) -> GraphSpec:
        """Raise ConfigError when keys, endpoints or restrictions name unknown things."""
        for label, node in self.nodes.items():
            for prop in (node.key, node.name, node.aliases):
                if prop and prop not in node.properties:
                    raise ConfigError(f"{self.name}: {label} has no property {prop!r}")
        for rel_name, rel in self.relationships.items():
            for end in (rel.source, rel.target):
                if end not in self.nodes:
                    raise ConfigError(f"{self.name}: {rel_name} refers to unknown label {end}")
        for label, r in self.restricted.items():
            if label not in self.nodes or r.property not in self.nodes[label].properties:
                raise ConfigError(f"{self.name}: restriction on unknown {label}.{r.property}")
        for name, intent in self.intents.items():
            for slot_name, slot in intent.values.items():
                self._check_slot(
                    f"{self.name}: intent {name}, slot {slot_name}", intent, slot_name, slot
                )
        return self

    def _check_slot(self, where: str, intent: Intent, name: str, slot: ValueSlot) -> None:
        if name in intent.params:
            raise ConfigError(f"{where}: also an entity parameter")
        if not re.search(rf"\${re.escape(name)}\b", intent.cypher):
            raise ConfigError(f"{where}: the template has no ${name}")
        if slot.type == "ENUM" and not slot.values and not slot.property:
            raise ConfigError(f"{where}: an ENUM slot needs `values` or `property`")
        if slot.property:
            label, _, prop = slot.property.partition(".")
            if label not in self.nodes or prop not in self.nodes[label].properties:
                raise ConfigError(f"{where}: unknown property {slot.property!r}")
            if label in self.restricted:  # its values would tell what a caller may not see
                raise ConfigError(f"{where}: {label} is restricted; list the values instead")

    def describe(self) -> str:
        """The schema as compact text for prompts."""
        lines = ["Node labels and properties (with example values):"]
        for label, node in self.nodes.items():
            ex = self.samples.get(label, {})
            props = ", ".join(
                f"{p}: {t}" + (f" e.g. {', '.join(map(repr, ex[p]))}" if ex.get(p) else "")
                for p, t in node.properties.items()
            )
            lines.append(f"- (:{label} {{{props}}})")
        lines.append("Relationships:")
        for name, rel in self.relationships.items():
            props = ", ".join(f"{p}: {t}" for p, t in rel.properties.items())
            lines.append(
                f"- (:{rel.source})-[:{name}{' {' + props + '}' if props else ''}]->(:{rel.target})"
            )
        return "\n".join(lines)


def sampled(
    spec: GraphSpec, nodes: Mapping[str, Sequence[Mapping[str, Any]]], n: int = 3
) -> GraphSpec:
    """`spec` with up to `n` distinct values of each text property of each unrestricted
    label, from the imported `nodes` rows (values over 40 characters are left out)."""
    samples: dict[str, dict[str, list[str]]] = {}
    for label, node in spec.nodes.items():
        if label in spec.restricted:
            continue
        for prop, typ in node.properties.items():
            if typ.upper() != "STRING":
                continue
            seen: list[str] = []
            for row in nodes.get(label, ()):
                v = row.get(prop)
                text = v.strip() if isinstance(v, str) else ""
                if text and text not in ("NULL", "null") and len(text) <= 40 and text not in seen:
                    seen.append(text)
                    if len(seen) == n:
                        break
            if seen:
                samples.setdefault(label, {})[prop] = seen
    return spec.model_copy(update={"samples": samples})


def load_spec(path: Path) -> GraphSpec:
    """Read and check a graph spec JSON file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return GraphSpec.model_validate(data).check()
    except (OSError, json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(f"{path}: invalid graph spec: {exc}") from exc


def save_spec(spec: GraphSpec, path: Path) -> None:
    """Write a graph spec as JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = spec.model_dump(by_alias=True, exclude_defaults=False)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


_ENGINE_ERRORS = (
    (r"did not receive correct arguments|type mismatch|expected .*type|cannot be cast|"
     r"implicit cast", "a function or comparison was given values of the wrong type"),
    (r"unknown function|function .* (?:does not exist|not found)|is not defined|"
     r"not defined|cannot find|does not exist", "it names something the graph does not have"),
    (r"parser exception|syntax error|invalid input|mismatched input|extraneous input",
     "it is not Cypher this graph engine reads"),
    (r"interrupt|timeout|timed out", "it ran past the time limit"),
    (r"overflow|division by zero|out of range", "a value went out of range while it ran"),
)  # fmt: skip


def engine_error_words(message: str) -> str:
    """What an engine error means, in words for the user (the message itself is logged)."""
    low = message.lower()
    for pattern, words in _ENGINE_ERRORS:
        if re.search(pattern, low):
            return words
    return "the graph engine reported an error (logged)"


@dataclass(frozen=True)
class GraphRows:
    """A query's result: column names and rows of JSON-able values."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool = False
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    def as_dicts(self) -> list[dict[str, Any]]:
        """Rows as column → value dicts."""
        return [dict(zip(self.columns, r, strict=False)) for r in self.rows]


class GraphStore(Protocol):
    """A Cypher-speaking graph. Generated queries only ever reach `query`/`explain`."""

    backend: str
    spec: GraphSpec

    def explain(self, cypher: str, params: Mapping[str, Any]) -> None:
        """Compile without running; GraphQueryError with the engine's message on failure."""
        ...

    def query(
        self, cypher: str, params: Mapping[str, Any], *, limit: int, timeout_s: float
    ) -> GraphRows:
        """Run a read-only query with a timeout, keeping at most `limit` rows."""
        ...

    def load(
        self,
        nodes: Mapping[str, Sequence[Mapping[str, Any]]],
        rels: Mapping[str, Sequence[Mapping[str, Any]]],
    ) -> dict[str, int]:
        """Create the schema (if new) and bulk-insert rows: returns counts per table."""
        ...

    def entities(self) -> list[tuple[str, str, str, list[str]]]:
        """(label, key, name, aliases) of every named node, for alignment."""
        ...

    def close(self) -> None:
        """Release the engine."""
        ...


def plain_value(v: Any) -> Any:
    """A JSON-able copy of an engine value (nodes/relationships become property dicts)."""
    if isinstance(v, dict):
        return {
            str(k): plain_value(x)
            for k, x in v.items()
            if x is not None and not str(k).startswith("_")
        }
    if isinstance(v, list | tuple):
        return [plain_value(x) for x in v]
    if v is None or isinstance(v, str | int | float | bool):
        return v
    props = getattr(v, "properties", None)
    if isinstance(props, dict):
        return plain_value(props)
    return str(v)


def coerce(value: Any, typ: str) -> Any:
    """A raw CSV/JSON value as the declared type (empty strings become None for non-strings)."""
    if value is None:
        return None
    if typ.endswith("[]"):
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.startswith("[") else value.split("|")
            except json.JSONDecodeError:
                value = value.split("|")
        items = value if isinstance(value, list) else [value]
        return [coerce(x, typ[:-2]) for x in items if x not in ("", None)]
    if typ == "STRING":
        return value if isinstance(value, str) else str(value)
    if isinstance(value, str) and value.strip() in ("", "NULL", "null"):
        return None
    try:
        if typ == "INT64":
            return int(float(value))
        if typ == "DOUBLE":
            return float(value)
        if typ == "BOOL":
            if isinstance(value, str):
                return value.strip().lower() in ("1", "true", "yes", "t")
            return bool(value)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot read {value!r} as {typ}") from exc
    return value
