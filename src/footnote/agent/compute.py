"""Computations over cited numbers: the agent's `run_python` tool and `footnote compute`.

Every input is a number read from evidence the caller may see — a table cell (`block#rRcC`,
whose one number is taken) or a block with the number given (`{"cite": id, "value": 3177}`,
checked by the verification gate: the number, with its unit, must occur in the cited text).
The snippet runs in the sandbox; the result is a `Computation` with an id (`calc-…`) that an
answer cites like a block. A computation supports only values it derives from its inputs: a
snippet that writes a number of its own (a literal other than 0, 1, 2, 100, 1000, or digits in a
string) is refused, and a result that stays the same when the snippet is run again over
perturbed inputs is dropped (none left: refused). As evidence it is a formula block whose text
lists the inputs with their citations and the derived results (rounded forms included, so
"77.3" may cite 77.275) — never the code or what it printed, which the model wrote.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from footnote.agent.sandbox import Sandbox, SandboxResult, Value
from footnote.agent.tools import ToolRegistry
from footnote.errors import ToolRetry
from footnote.textnorm import quantities
from footnote.types import Block, parse_evidence_id
from footnote.verify.checks import check_citation
from footnote.verify.evidence import Evidence, EvidenceSet

BlockFn = Callable[[str], Block]
"""Resolves a block id the caller may read (ToolRetry otherwise)."""


class CitedNumber(BaseModel):
    """A number with the evidence it is read from."""

    cite: str = Field(..., description="A block or table-cell id (`…#r2c3`).")
    value: float | None = Field(None, description="The number, when the cited text has several.")


@dataclass(frozen=True)
class ComputeInput:
    """One bound input: its name, value, the id it cites and that evidence's text."""

    name: str
    value: float
    cite: str
    text: str
    label: str = ""
    """Where the number sits: a cell's row label and column header ("Ours, Dev")."""


@dataclass(frozen=True)
class Computation:
    """A snippet run over cited inputs, and what it gave."""

    id: str
    code: str
    inputs: tuple[ComputeInput, ...]
    result: SandboxResult
    source_id: str
    page: int
    section: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    """Results left out because they do not depend on the inputs (not citable)."""

    def render(self) -> str:
        """The computation as evidence text: inputs with citations and derived results (the
        model's code and printed text are not evidence)."""
        lines = [f"Computation {self.id} (run in the sandbox: {self.result.status})",
                 "inputs (cited):"]  # fmt: skip
        lines += [
            f"  {i.name} = {i.value:g}  [{i.cite}]" + (f" ({i.label})" if i.label else "")
            for i in self.inputs
        ]
        if self.result.values:
            lines.append("computed results:")
            for k, v in self.result.values.items():
                lines.append(f"  {k} = {_rounded(v)}")
        if self.result.error:
            lines.append(f"error: {self.result.error}")
        return "\n".join(lines)

    def block(self) -> Block:
        """The computation as a citable evidence block (kind `formula`, on its first input's page)."""
        return Block(
            self.id, self.source_id, "formula", self.render(), self.page,
            section_path=("Computation", *self.section[-1:]),
        )  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (tool output, CLI `--json`, the API)."""
        return {
            "id": self.id,
            "status": self.result.status,
            "values": self.result.values,
            "stdout": self.result.stdout,
            "error": self.result.error,
            "inputs": [
                {
                    "name": i.name,
                    "value": i.value,
                    "cite": i.cite,
                    "text": i.text[:200],
                    "label": i.label,
                }
                for i in self.inputs
            ],
            "code": self.code,
            "not_derived": list(self.dropped),
            "seconds": round(self.result.seconds, 3),
        }


def _rounded(v: Any) -> str:
    """A value with its usual roundings ("77.275 (≈ 77.28, ≈ 77.3)")."""
    if isinstance(v, float) and not v.is_integer():
        forms = dict.fromkeys(f"{round(v, d):g}" for d in (2, 1, 0))
        forms.pop(f"{v:g}", None)
        return f"{v:g}" + (f" (≈ {', ≈ '.join(forms)})" if forms else "")
    return json.dumps(v) if isinstance(v, list) else str(v)


def read_input(name: str, spec: str | CitedNumber, block_of: BlockFn) -> ComputeInput:
    """Resolve one input; ToolRetry (for the model) when its number is not in the cited text."""
    cite, given = (spec, None) if isinstance(spec, str) else (spec.cite, spec.value)
    block_id, cell = parse_evidence_id(cite.strip())
    block = block_of(block_id)
    items = EvidenceSet(
        [Evidence(block.id, block.table.as_text() if block.table else block.text, block)]
    )
    ev = items.resolve(cite.strip())
    if ev is None:
        raise ToolRetry(f"input {name}: {cite} is not a cell of that table")
    text = block.table.cell(*cell) if block.table is not None and cell else ev.text
    found = quantities(text or "")
    if given is None:
        if len(found) != 1:
            raise ToolRetry(
                f"input {name}: {cite} holds {len(found)} numbers; give "
                '{"cite": id, "value": number}'
            )
        given = found[0].value
    # the one verification path: the number must occur in the cited text
    check = check_citation(f"{given:g}", ev.id, items)
    if check.fabricated or "numbers" in check.reasons:
        raise ToolRetry(f"input {name}: {given:g} does not occur in {cite}")
    label = ""
    if block.table is not None and cell is not None:
        row, col = cell
        header = block.table.header[-1] if block.table.header else ()
        row_label = block.table.all_rows[row][0] if block.table.all_rows[row] else ""
        label = ", ".join(x for x in (row_label, header[col] if col < len(header) else "") if x)
    return ComputeInput(name, float(given), ev.id, text or ev.text, label)


ALLOWED_CONSTANTS = frozenset({0, 1, 2, 100, 1000})
"""The numbers a snippet may write itself (halving, percentages, thousands), besides counts up
to the number of its inputs."""
_ALLOWED_TEXT = ", ".join(str(n) for n in sorted(ALLOWED_CONSTANTS))
_PERTURBATIONS = ((1.5, 0.25), (1.05, 0.01))
"""Input i is multiplied by base + step·i (a zero input becomes base + step·i − 1)."""
_MOVED = 1e-4
"""Least relative change under perturbation for a result to count as derived."""
_DIGIT = re.compile(r"\d")


def introduced_numbers(code: str, n_inputs: int = 0) -> list[str]:
    """The numbers a snippet writes itself: numeric literals outside `ALLOWED_CONSTANTS` and
    the count of its inputs (`/ 3` averages three), and strings with digits. Not counted: an
    f-string's format spec (`.3f`) and the digits of `round(x, 3)`, which add no value."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []  # the sandbox reports what is wrong with it
    skip = {
        id(c)
        for node in ast.walk(tree)
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None
        for c in ast.walk(node.format_spec)
    }
    skip |= {
        id(arg)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        if node.func.id == "round"
        for arg in [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "ndigits")]
        if isinstance(arg, ast.Constant) and type(arg.value) is int and 0 <= arg.value <= 9
    }
    allowed = ALLOWED_CONSTANTS | set(range(1, n_inputs + 1))
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or id(node) in skip:
            continue
        v = node.value
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int | float | complex):
            if v not in allowed:
                found.append(repr(v))
        elif isinstance(v, str | bytes) and _DIGIT.search(str(v)):
            found.append(repr(v)[:40])
    return found


def _moved(before: Value, after: Value | None) -> bool:
    """Whether a result changed with its inputs (every element of a list; never a flag or text)."""
    if isinstance(before, list) and isinstance(after, list):
        return len(before) == len(after) > 0 and all(
            _moved(b, a) for b, a in zip(before, after, strict=True)
        )
    if isinstance(before, bool) or isinstance(after, bool):
        return False
    if not isinstance(before, int | float) or not isinstance(after, int | float):
        return False
    return abs(after - before) > _MOVED * max(abs(before), abs(after))


@dataclass
class ComputeContext:
    """The sandbox, the resolver of cited blocks and the computations made so far."""

    sandbox: Sandbox
    block_of: BlockFn
    computations: dict[str, Computation] = field(default_factory=dict)

    def compute(self, code: str, inputs: dict[str, str | CitedNumber]) -> Computation:
        """Run `code` over the cited inputs; the computation is kept for citing."""
        if not inputs:
            raise ToolRetry("give the numbers as named inputs that cite their cells")
        bound = [read_input(name, spec, self.block_of) for name, spec in inputs.items()]
        own = introduced_numbers(code, len(bound))
        if own:
            raise ToolRetry(
                f"the snippet writes numbers of its own ({', '.join(own[:5])}): a computation "
                f"may use only its cited inputs, the constants {_ALLOWED_TEXT} and the count "
                "of its inputs"
            )
        values = {i.name: i.value for i in bound}
        result = self.sandbox.run(code, values)
        dropped: tuple[str, ...] = ()
        if result.ok:
            derived = self._derived(code, values, result)
            dropped = tuple(k for k in result.values if k not in derived)
            if not derived:
                raise ToolRetry(
                    "no result of the snippet depends on its inputs: assign the values you "
                    "want to cite to variables computed from the inputs"
                )
            result = dataclasses.replace(result, values=derived)
        digest = hashlib.sha1(
            json.dumps([code, [(i.name, i.value, i.cite) for i in bound]]).encode()
        ).hexdigest()[:10]
        first = self.block_of(parse_evidence_id(bound[0].cite)[0])
        comp = Computation(
            f"calc-{digest}", code, tuple(bound), result, first.source_id, first.page,
            first.section_path, dropped,
        )  # fmt: skip
        if result.ok:
            self.computations[comp.id] = comp
        return comp

    def _derived(
        self, code: str, values: dict[str, float], result: SandboxResult
    ) -> dict[str, Value]:
        """The results that change when the snippet runs over perturbed inputs (a second
        perturbation, close to the first values, when the first makes the snippet fail)."""
        for base, step in _PERTURBATIONS:
            moved = {
                k: v * (base + step * n) if v else base + step * n - 1
                for n, (k, v) in enumerate(values.items())
            }
            again = self.sandbox.run(code, moved)
            if again.ok:
                return {k: v for k, v in result.values.items() if _moved(v, again.values.get(k))}
        return {}


def add_compute_tool(reg: ToolRegistry, ctx: ComputeContext) -> None:
    """Register `run_python` on an agent's registry."""

    def run_python(code: str, inputs: dict[str, str | CitedNumber]) -> dict[str, Any]:
        """Run a short Python snippet in a sandbox over numbers from cited cells; returns its
        results and an id (`calc-…`) to cite for any number the answer takes from it.

        Args:
            code: Python that assigns its results to variables computed from the inputs (e.g.
                `avg = (a + b) / 2`); numbers of its own other than 0, 1, 2, 100, 1000 and the
                count of inputs are refused.
            inputs: variable name -> a table-cell id holding one number, or {"cite": id, "value": n}.
        """
        comp = ctx.compute(code, inputs)
        if not comp.result.ok:
            raise ToolRetry(f"the snippet failed ({comp.result.status}): {comp.result.error}")
        return comp.to_dict()

    reg.add(run_python, cache=False)
