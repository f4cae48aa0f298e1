"""Typed output from a chat model: schema-constrained where supported, else parse + repair.

`structured(model, messages, OutputType)` returns a validated pydantic object. With a backend
that enforces JSON schemas the output is grammar-constrained; either way it is parsed (code
fences stripped, first JSON object taken) and validated, and ONE repair attempt follows a
failure, with the validation error shown to the model. Then `ModelOutputInvalid`.
Temperature-0 calls go through the role's response cache (keyed by model + messages + schema).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from footnote.errors import ModelOutputInvalid
from footnote.models.base import Message
from footnote.models.budget import Budget
from footnote.models.jsontext import find_json_object
from footnote.models.roles import RoleModel

T = TypeVar("T", bound=BaseModel)


def schema_instruction(schema: dict[str, Any]) -> str:
    """The system-prompt line that describes the expected JSON."""
    body = json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    return f"Reply with one JSON object that matches this JSON schema, and nothing else:\n{body}"


def _with_instruction(messages: Sequence[Message], schema: dict[str, Any]) -> list[Message]:
    msgs = list(messages)
    line = schema_instruction(schema)
    if msgs and msgs[0].role == "system":
        msgs[0] = Message("system", msgs[0].content + "\n\n" + line)
    else:
        msgs.insert(0, Message("system", line))
    return msgs


def parse_output(text: str, output_type: type[T]) -> T:
    """Validate the first JSON object in `text` as `output_type` (ValueError/ValidationError)."""
    return output_type.model_validate(find_json_object(text))


def structured(
    model: RoleModel,
    messages: Sequence[Message],
    output_type: type[T],
    *,
    labels: Sequence[str],
    budget: Budget | None = None,
    max_tokens: int = 512,
    run_id: str | None = None,
    temperature: float = 0.0,
    use_cache: bool = True,
) -> T:
    """A validated `output_type` from the model, after at most one repair round."""
    schema = output_type.model_json_schema()
    caps = model.capabilities()
    constrained = schema if caps.json_schema else None
    msgs = _with_instruction(messages, schema)
    common: dict[str, Any] = {
        "labels": labels,
        "budget": budget,
        "run_id": run_id,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "json_schema": constrained,
        "cache": use_cache,
    }
    first = model.complete(msgs, **common)
    try:
        return parse_output(first.text, output_type)
    except (ValueError, ValidationError) as exc:
        error = _describe(exc)
    repair = [
        *msgs,
        Message("assistant", first.text),
        Message(
            "user",
            "That reply is not valid for the schema. Error:\n"
            f"{error}\nReply again with only the corrected JSON object.",
        ),
    ]
    second = model.complete(repair, **{**common, "note": "structured repair"})
    try:
        return parse_output(second.text, output_type)
    except (ValueError, ValidationError) as exc:
        raise ModelOutputInvalid(
            f"{model.role} ({model.name}) output is not a valid {output_type.__name__} after one "
            f"repair attempt: {_describe(exc)}"
        ) from exc


def _describe(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        )
    return str(exc)
