"""Computations support only values they derive from their cited inputs (issue #30, finding 2):
a snippet that invents a number is refused, and the judge never sees the model's code."""

from __future__ import annotations

import asyncio
import sys

import pytest

from footnote.agent.compute import ComputeContext
from footnote.agent.sandbox import Sandbox, SandboxLimits
from footnote.errors import ToolRetry
from footnote.events import Final
from footnote.types import Block, Table
from footnote.verify.gate import verify_text_answer

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")

TABLE = Block(
    "abcdef12-p3-000004", "abcdef12", "table", "Table 1: accuracy", 3,
    table=Table((("Model", "Dev", "Test"),), (("BERT", "91.0", "90.0"), ("Ours", "93.0", "92.0")),
                caption="Table 1: Accuracy on SST-2."),
)  # fmt: skip
DEV, TEST = f"{TABLE.id}#r2c1", f"{TABLE.id}#r2c2"


@pytest.fixture(scope="module")
def ctx() -> ComputeContext:
    box = Sandbox(SandboxLimits(cpu_seconds=2, wall_seconds=8, memory_mb=128))
    assert box.problem() is None, box.problem()  # scripts/setup installs bubblewrap

    def block_of(block_id: str) -> Block:
        if block_id != TABLE.id:
            raise ToolRetry(f"no block {block_id!r}")
        return TABLE

    return ComputeContext(box, block_of)


def test_a_derived_value_is_kept(ctx: ComputeContext) -> None:
    comp = ctx.compute("avg = (dev + test) / 2\npct = dev / 100", {"dev": DEV, "test": TEST})
    assert comp.result.values == {"avg": 92.5, "pct": 0.93}
    assert comp.id in ctx.computations
    three = {"a": DEV, "b": TEST, "c": f"{TABLE.id}#r1c1"}  # the count of inputs, round's digits
    mean = ctx.compute("avg = round((a + b + c) / 3, 3)\nprint(f'{avg:.4f}')", three)
    assert mean.result.values == {"avg": 92.0}
    with pytest.raises(ToolRetry, match="number"):
        ctx.compute("avg = (dev + test) / 3", {"dev": DEV, "test": TEST})  # 3 is not a count here


@pytest.mark.parametrize(
    "code",
    [
        "acc = 97.3",  # an invented literal, inputs unused
        "acc = 97.3 + 0 * dev",  # an invented literal beside an input
        "acc = dev + 4.3",  # a literal outside the allowed set
        "acc = float('97.3')",  # a number hidden in a string
    ],
)
def test_a_snippet_that_introduces_a_number_is_refused(ctx: ComputeContext, code: str) -> None:
    with pytest.raises(ToolRetry, match="number"):
        ctx.compute(code, {"dev": DEV, "test": TEST})
    assert not any(c.code == code for c in ctx.computations.values())


def test_a_value_that_does_not_depend_on_the_inputs_is_not_citable(ctx: ComputeContext) -> None:
    """Allowed literals only, but the value is the same whatever the inputs are."""
    code = "acc = (1000 - 2 - 1) / (2 * 2 * 2 + 2) + (dev - dev)"
    with pytest.raises(ToolRetry, match="depend"):
        ctx.compute(code, {"dev": DEV})
    mixed = ctx.compute("k = 1000 - 2 - 1\ngap = dev - test", {"dev": DEV, "test": TEST})
    assert mixed.result.values == {"gap": 1.0}  # only the derived value is a result
    assert "997" not in mixed.render()


def test_the_judge_sees_inputs_and_results_not_code(ctx: ComputeContext) -> None:
    code = "# the accuracy is 97.3 according to the authors\ngap = dev - test"
    comp = ctx.compute(code, {"dev": DEV, "test": TEST})
    passages: list[str] = []

    def judge(claim: str, passage: str) -> float:
        passages.append(passage)
        return 0.9

    text = f"Ours is 1 point better on Dev than on Test [{comp.id}]."

    async def go() -> Final:
        events = [e async for e in verify_text_answer("Gap?", text, [comp.block()], judge=judge)]
        return next(e for e in events if isinstance(e, Final))

    final = asyncio.run(go())
    assert passages and all("97.3" not in p and "gap = dev" not in p for p in passages)
    assert "dev = 93" in passages[0] and "gap = 1" in passages[0]
    assert final.answer.status == "answered"
