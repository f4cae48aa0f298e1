"""Multi-part and counterfactual questions: one quoted, cited sentence per part, in one call.

A question that asks two things ("how many …, and how many …") or what would follow if something
were different gets a grammar-constrained list of parts, each `{quote, cite, answer}` as in the
`cite` composer. Every part becomes its own draft sentence, so the gate checks each one on its
own and drops the ones it cannot support; a counterfactual's conclusion is kept only when it
passes like any other sentence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from footnote.errors import ModelOutputInvalid
from footnote.models.base import Message
from footnote.pipelines.ask.compose import CiteAnswer, Complete, evidence_prompt_block
from footnote.prompts import load_prompt, render
from footnote.verify import EvidenceSet
from footnote.verify.draft import REFUSAL_RE, Draft, DraftSentence

MAX_PARTS = 3
_WH = re.compile(r"\b(?:what|which|how|who|whom|when|where|why)\b", re.IGNORECASE)
_ZH_Q = re.compile(r"多少|什么|哪些|哪个|哪|几|为何|为什么|如何|怎样")
_JOIN = re.compile(r"\band\b|，|,|;|；|以及|并且|分别|和", re.IGNORECASE)


class Parts(BaseModel):
    """The parts composer's output."""

    parts: list[CiteAnswer] = Field(min_length=1, max_length=MAX_PARTS)


def is_multi_part(question: str) -> bool:
    """Two question words joined by "and"/a comma, two question marks, or 分别."""
    if question.count("?") + question.count("？") >= 2 or "分别" in question:
        return True
    asks = len(_WH.findall(question)) + len(_ZH_Q.findall(question))
    return asks >= 2 and bool(_JOIN.search(question))


def parts_schema(aliases: Sequence[str]) -> dict[str, object]:
    """JSON schema for `Parts`, each `cite` restricted to the ids shown (or none)."""
    part = {
        "type": "object",
        "properties": {
            "quote": {"type": "string", "maxLength": 300},
            "cite": {"type": "string", "enum": [*aliases, "none"]},
            "answer": {"type": "string", "maxLength": 300},
        },
        "required": ["quote", "cite", "answer"],
    }
    return {
        "type": "object",
        "properties": {
            "parts": {"type": "array", "items": part, "minItems": 1, "maxItems": MAX_PARTS}
        },
        "required": ["parts"],
    }


def parse_parts(text: str) -> Parts:
    """The model's JSON as `Parts` (code fences and chatter around it tolerated)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ModelOutputInvalid(f"no JSON object in model output: {text[:200]!r}")
    try:
        return Parts.model_validate(json.loads(text[start : end + 1]))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ModelOutputInvalid(f"model output is not a valid parts object: {exc}") from exc


def compose_parts(question: str, evidence: EvidenceSet, complete: Complete) -> Draft:
    """One structured call; one draft sentence per answered part (refused when none is)."""
    aliases = {f"E{i + 1}": ev.id for i, ev in enumerate(evidence.items)}
    user = render(
        "compose_parts", evidence=evidence_prompt_block(evidence.items, aliases), question=question
    )
    messages = [Message("system", load_prompt("compose_system").strip()), Message("user", user)]
    schema = parts_schema(list(aliases))
    completion = complete(messages, schema)
    try:
        parsed = parse_parts(completion.text)
    except ModelOutputInvalid as first:
        repair = [
            *messages,
            Message("assistant", completion.text),
            Message("user", f"That was not valid: {first}. Output only the JSON object."),
        ]
        completion = complete(repair, schema)
        parsed = parse_parts(completion.text)
    draft = Draft(raw=completion.text)
    for part in parsed.parts:
        if part.cite == "none" or not part.quote.strip() or REFUSAL_RE.search(part.answer):
            continue
        cite = aliases.get(part.cite, part.cite)  # an id not shown is counted as fabricated
        draft.sentences.append(DraftSentence(part.answer.strip(), [cite], part.quote.strip()))
    draft.refused = not draft.sentences
    return draft
