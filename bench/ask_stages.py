"""Which stage fails, for each case a configuration got wrong: read from an `ask_quality.py --dump`.

A case that is not correct (by the evaluator's `score_case`) is put in the first stage that
explains it, by code:

- `retrieval`: an answerable case whose gold evidence is in no passage the model was shown;
- `selection/phrasing`: the gold evidence was shown, but no draft the model wrote matches the
  accepted answers (the model picked the wrong passage or said it wrongly);
- `check refused a right draft`: some draft matched, but the final output is a refusal (or a
  revision lost the right value);
- `check passed a wrong answer`: an answer was shown that does not match (the gold evidence
  was shown, a draft was wrong and nothing stopped it) — listed with its draft;
- `unanswerable answered`: a case the paper cannot answer got an answer or a hedged sentence;
- `error`: the run failed (never folded into another stage).

Dumps written before the bench kept drafts and shown passages (`drafts`, `shown_text`) have no
drafts: such cases say `stage unknown (no drafts in dump)`.

Usage: python bench/ask_stages.py DUMP [--config new] [--list]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT
from footnote.eval.cases import Case
from footnote.eval.loaders import default_data_dir, load_dataset
from footnote.eval.metrics import answer_f1, answer_matches, evidence_found, score_case

_MARKER = re.compile(r"\[[^\]]{1,40}\]")


def draft_answer(draft: str) -> str:
    """What a draft answers: the `answer` of a `cite` draft's JSON (each part's, joined), never
    its quote (a quote holding the gold words is not an answer); a free draft as written."""
    start, end = draft.find("{"), draft.rfind("}")
    try:
        data = json.loads(draft[start : end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and "parts" in data:
        return " ".join(str(p.get("answer", "")) for p in data["parts"] if isinstance(p, dict))
    if isinstance(data, dict) and "answer" in data:
        return str(data["answer"])
    return _MARKER.sub("", draft)


def draft_right(case: Case, draft: str) -> bool:
    """A draft whose answer would score as a right answer."""
    text = draft_answer(draft)
    if not (case.accept or case.accept_all):
        return answer_f1(case, text, False) >= 0.5
    matched = answer_matches(text, case.accept, case.accept_all, case.accept_min)
    return matched or (not case.accept_all and answer_f1(case, text, False) >= 0.5)


def gold_shown(case: Case, out: dict[str, Any]) -> bool | None:
    """Whether a passage the model was shown holds a gold quote (None: no gold evidence)."""
    if not case.evidence:
        return None
    texts = out.get("shown_text", {}).values()
    return any(evidence_found(g, {"text": t}) for g in case.evidence for t in texts)


def stage(case: Case, out: dict[str, Any], scores: dict[str, Any]) -> str:
    """The first stage that explains a case that is not correct ("" for a correct one)."""
    if scores["correct"]:
        return ""
    if scores["error"]:
        return "error"
    if case.unanswerable:
        return "unanswerable answered"
    shown = gold_shown(case, out)
    if shown is False:
        return "retrieval"
    if "drafts" not in out:
        return "stage unknown (no drafts in dump)"
    drafts = [d for d in out["drafts"] if d]
    if not any(draft_right(case, d) for d in drafts):
        return "selection/phrasing" if scores["refused"] else "check passed a wrong answer"
    return "check refused a right draft"


def read(dump: Path, config: str) -> list[tuple[Case, dict[str, Any], dict[str, Any]]]:
    """The dump's rows of one configuration, re-scored by today's evaluator."""
    dev = load_dataset(
        "footnote-dev",
        data_dir=default_data_dir(),
        cache_dir=OUT / "ask_retrieval" / "dev" / "cache",
    )
    by_id = {c.id: c for c in dev.cases}
    rows = [json.loads(x) for x in dump.read_text(encoding="utf-8").splitlines() if x]
    return [
        (by_id[r["case"]], r["output"], score_case(by_id[r["case"]], r["output"]))
        for r in rows
        if r["config"] == config and r["case"] in by_id
    ]


def report(rows: Sequence[tuple[Case, dict[str, Any], dict[str, Any]]], listing: bool) -> str:
    """Counts per stage (of all cases, and of the wrong ones), then each wrong case if asked."""
    stages = [(c, o, s, stage(c, o, s)) for c, o, s in rows]
    wrong = [x for x in stages if x[3]]
    counts = Counter(x[3] for x in wrong)
    lines = [f"{len(rows)} cases, {len(wrong)} not correct", "", "| stage | cases |", "|---|---|"]
    lines += [f"| {name} | {n} |" for name, n in counts.most_common()]
    shown = [gold_shown(c, o) for c, o, _, _ in stages if not c.unanswerable]
    known = [x for x in shown if x is not None]
    lines += [
        "",
        f"gold evidence shown to the model: {sum(known)} of {len(known)} answerable cases",
    ]
    if listing:
        lines.append("")
        for c, o, _s, name in wrong:
            drafts = [d for d in o.get("drafts", []) if d]
            lines.append(f"- {c.id} [{c.type}/{c.lang}] {name}: {c.question}")
            lines.append(f"    gold: {(c.answer or '(unanswerable)')[:120]!r}")
            lines.append(f"    shown: {o.get('status')} {o.get('answer', '')[:160]!r}")
            if drafts:
                lines.append(f"    first draft: {drafts[0][:160]!r}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dump")
    p.add_argument("--config", default="new")
    p.add_argument("--list", action="store_true", help="every case not correct, with its drafts")
    a = p.parse_args(argv)
    print(report(read(Path(a.dump), a.config), a.list))


if __name__ == "__main__":
    main()
