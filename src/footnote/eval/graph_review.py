"""Who checks synthetic graph pairs, and the human spot-check of that check.

`graph synth` writes questions with one role (`compose` in facts mode, `cypher` in free mode)
and checks them with another (`judge` by default, `--checker ROLE`): the checker sees only the
question and the rows the query returned — never the Cypher or the writer's words about it —
and must agree the rows answer the question. A checker bound to the writer's model checks
nothing the writer did not already believe, so then (and when the checker role is unbound)
the check is by execution and code only (parse, read-only guard, EXPLAIN, rows with a value,
the query's literals named in the question) and the report says so.

`export_review` writes a seeded random sample of the checked pairs (kept and rejected by the
checker) as CSV or JSONL with blank `human_verdict` / `human_note` columns; `import_review`
reads the filled file back and reports how often the human agrees with the automatic check.
"""

from __future__ import annotations

import csv
import json
import random
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from footnote.models.roles import ModelRoles, RoleModel

REVIEW_FIELDS = ("id", "question", "cypher", "rows", "auto_verdict", "auto_by", "human_verdict",
                 "human_note")  # fmt: skip
YES = frozenset({"yes", "y", "true", "1", "ok", "correct", "keep", "是", "对"})
NO = frozenset({"no", "n", "false", "0", "wrong", "incorrect", "reject", "否", "错"})
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'")


@dataclass(frozen=True)
class Checker:
    """The model that checks the writer's pairs (None: execution and code only) and why."""

    model: RoleModel | None
    by: str
    """`ROLE (URL)` of the checker model, or `execution+code`."""
    note: str
    """One sentence for the report: who checked, or why no model did."""


def pick_checker(models: ModelRoles, writer_role: str, checker_role: str = "judge") -> Checker:
    """The checker for pairs written by `writer_role`: `checker_role` when it is bound to a
    model other than the writer's, else no model (execution and code only), said in `note`."""
    writer_url = models.binding(writer_role).url
    url = models.binding(checker_role).url
    if not url:
        return Checker(None, "execution+code", f"checked by execution and code only: the "
                       f"checker role {checker_role!r} is not bound")  # fmt: skip
    if url == writer_url or checker_role == writer_role:
        return Checker(None, "execution+code", f"checked by execution and code only: the "
                       f"checker role {checker_role!r} is bound to the writer's model ({url}, "
                       f"role {writer_role!r}); bind models.{checker_role}.url to another model "
                       "for a model check")  # fmt: skip
    return Checker(models.chat(checker_role), f"{checker_role} ({url})",
                   f"checked by {checker_role} ({url}); written by {writer_role} ({writer_url})")  # fmt: skip


def independent(writer: RoleModel, checker: RoleModel | None) -> Checker:
    """`checker` as a Checker, or none when it is missing or the writer's own model."""
    if checker is None:
        return Checker(None, "execution+code", "checked by execution and code only: no checker")
    if checker.model is writer.model or checker.name == writer.name:
        return Checker(None, "execution+code", "checked by execution and code only: the "
                       f"checker is the writer's model ({writer.name})")  # fmt: skip
    return Checker(checker, f"{checker.role} ({checker.name})",
                   f"checked by {checker.role} ({checker.name}); written by {writer.role} "
                   f"({writer.name})")  # fmt: skip


def literals_missing(question: str, cypher: str) -> list[str]:
    """The string literals of `cypher` (the entities it selects) that `question` does not name
    (case and spacing aside): a question about another entity than its query."""
    said = " ".join(question.lower().split())
    out = []
    for m in _LITERAL.finditer(cypher):
        value = " ".join(m.group(1).replace("\\'", "'").replace("\\\\", "\\").lower().split())
        if value and value not in said:
            out.append(m.group(1))
    return out


@dataclass(frozen=True)
class Candidate:
    """A pair that passed execution and code checks, with what the automatic check said."""

    question: str
    cypher: str
    rows: str
    auto_verdict: str
    """`keep` or `reject` (the checker model disagreed)."""
    auto_by: str


def export_review(
    candidates: Sequence[Candidate], path: Path, size: int, seed: int | None = None
) -> dict[str, Any]:
    """Write a random sample of `size` candidates (all when fewer) to `path` (`.csv`: CSV, else
    JSONL) with blank human columns; the seed (drawn when None) is in the returned summary."""
    seed = secrets.randbelow(2**31) if seed is None else seed
    picked = sorted(random.Random(seed).sample(range(len(candidates)), min(size, len(candidates))))
    rows = [
        {"id": f"p{i}", **{k: v for k, v in asdict(candidates[i]).items()},
         "human_verdict": "", "human_note": ""}
        for i in picked
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".csv":
        with path.open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=REVIEW_FIELDS)
            w.writeheader()
            w.writerows(rows)
    else:
        with path.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return {"file": str(path), "size": len(rows), "of": len(candidates), "seed": seed}


def _read(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".csv":
        with path.open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f))
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _verdict(value: Any) -> bool | None:
    text = str(value if value is not None else "").strip().lower()
    if not text:
        return None
    if text in YES:
        return True
    if text in NO:
        return False
    raise ValueError(f"human_verdict {value!r}: write yes or no (or leave it blank)")


def import_review(path: Path) -> dict[str, Any]:
    """The human agreement with the automatic check in a filled review file: rows reviewed,
    agreement rate, the rate among kept and among rejected pairs, and the ids they differ on.
    A blank `human_verdict` is not reviewed; yes means the question and its rows match."""
    rows = _read(path)
    reviewed: list[tuple[str, bool, bool]] = []
    for n, r in enumerate(rows, 1):
        if not isinstance(r, Mapping) or "auto_verdict" not in r:
            raise ValueError(f"{path}:{n}: not a review row (no auto_verdict column)")
        try:
            human = _verdict(r.get("human_verdict"))
        except ValueError as exc:
            raise ValueError(f"{path}:{n} ({r.get('id')}): {exc}") from None
        if human is not None:
            reviewed.append((str(r.get("id", n)), r["auto_verdict"] == "keep", human))

    def rate(pairs: Sequence[tuple[str, bool, bool]]) -> float | None:
        return round(sum(a == h for _, a, h in pairs) / len(pairs), 3) if pairs else None

    kept = [p for p in reviewed if p[1]]
    return {
        "file": str(path), "rows": len(rows), "reviewed": len(reviewed),
        "agreement": rate(reviewed), "agreement_kept": rate(kept),
        "agreement_rejected": rate([p for p in reviewed if not p[1]]),
        "kept_reviewed": len(kept),
        "disagreements": [i for i, a, h in reviewed if a != h],
    }  # fmt: skip
