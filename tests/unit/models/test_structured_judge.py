import math

import pytest
from models_fakes import FakeChatModel, ProbeModel, roles_with, settings
from pydantic import BaseModel

from footnote.errors import ModelOutputInvalid
from footnote.models.base import Capabilities, Message
from footnote.models.judge import (
    NO_LOGPROBS_NOTE,
    judge_messages,
    judge_support,
    parse_yes_no,
    yes_probability,
)
from footnote.models.ledger import Ledger
from footnote.models.structured import structured

LOCAL = "local:qwen2.5-coder-1.5b"
MSG = [Message("system", "You answer."), Message("user", "Capital of France?")]


class Answer(BaseModel):
    answer: str
    citations: list[int]


def _role(model: object, ledger: Ledger | None = None, role: str = "compose"):  # type: ignore[no-untyped-def]
    return roles_with({LOCAL: model}, settings(**{role: LOCAL}), ledger).chat(role)


def test_structured_first_try_with_fences() -> None:
    fake = FakeChatModel(['Sure:\n```json\n{"answer": "Paris", "citations": [1]}\n```'])
    out = structured(_role(fake), MSG, Answer, labels=())
    assert out == Answer(answer="Paris", citations=[1])
    sys_msg = fake.calls[0][0]
    assert (
        sys_msg.role == "system"
        and "JSON schema" in sys_msg.content
        and "You answer." in sys_msg.content
    )


def test_structured_passes_schema_when_supported() -> None:
    m = ProbeModel("p", '{"answer": "x", "citations": []}')
    structured(_role(m), MSG, Answer, labels=())
    assert m.calls[0]["json_schema"]["required"] == ["answer", "citations"]
    m2 = ProbeModel("p", '{"answer": "x", "citations": []}', caps=Capabilities(json_schema=False))
    structured(_role(m2), MSG, Answer, labels=())
    assert m2.calls[0]["json_schema"] is None


def test_structured_repair_path(ledger: Ledger) -> None:
    fake = FakeChatModel(['{"answer": "Paris"}', '{"answer": "Paris", "citations": [2]}'])
    out = structured(_role(fake, ledger), MSG, Answer, labels=(), run_id="r")
    assert out.citations == [2]
    repair = fake.calls[1]
    assert repair[-2] == Message("assistant", '{"answer": "Paris"}')
    assert "citations" in repair[-1].content and "Field required" in repair[-1].content
    assert [r.note for r in ledger.records("r")] == ["", "structured repair"]


def test_structured_gives_up_after_one_repair() -> None:
    fake = FakeChatModel(["no json here", '{"answer": 3}'])
    with pytest.raises(ModelOutputInvalid, match="Answer"):
        structured(_role(fake), MSG, Answer, labels=())
    assert len(fake.calls) == 2


def test_structured_uses_response_cache() -> None:
    m = ProbeModel("p", '{"answer": "x", "citations": []}')
    rm = _role(m)
    structured(rm, MSG, Answer, labels=())
    structured(rm, MSG, Answer, labels=())
    assert len(m.calls) == 1


def test_yes_probability_variants() -> None:
    top = {"Yes": math.log(0.6), " yes": math.log(0.1), "No": math.log(0.2), "The": -1.0}
    assert yes_probability(top) == pytest.approx(0.7 / 0.9)
    assert yes_probability({"是": math.log(0.3), "否": math.log(0.1)}) == pytest.approx(0.75)
    assert yes_probability({"YES": -0.1, "NO.": -5.0}) == pytest.approx(
        math.exp(-0.1) / (math.exp(-0.1) + math.exp(-5.0))
    )
    assert yes_probability({"Maybe": -0.1}) is None
    assert parse_yes_no("Yes.") == 1.0 and parse_yes_no("no") == 0.0
    assert parse_yes_no("是的") == 1.0 and parse_yes_no("unclear") == 0.5


def test_judge_from_logprobs(ledger: Ledger) -> None:
    m = ProbeModel("p", "Yes", top=({"Yes": math.log(0.8), "No": math.log(0.2)},))
    p = judge_support(_role(m, ledger, "judge"), "Paris is in France.", "Paris, France.", labels=())
    assert p == pytest.approx(0.8)
    call = m.calls[0]
    assert call["max_tokens"] == 1 and call["temperature"] == 0.0 and call["logprobs"] > 0
    text = call["messages"][0].content
    assert "Paris is in France." in text and "Paris, France." in text
    assert ledger.records()[0].note == ""


def test_judge_without_logprobs_parses_and_notes(ledger: Ledger) -> None:
    m = ProbeModel("p", "No", caps=Capabilities(logprobs=False))
    assert judge_support(_role(m, ledger, "judge"), "c", "p", labels=()) == 0.0
    assert ledger.records()[0].note == NO_LOGPROBS_NOTE


def test_judge_prompt_is_package_data() -> None:
    [msg] = judge_messages("CLAIM-X", "PASSAGE-Y")
    assert "CLAIM-X" in msg.content and "PASSAGE-Y" in msg.content and "{claim}" not in msg.content
