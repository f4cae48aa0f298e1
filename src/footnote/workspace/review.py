"""The analyst's review of a research brief (composition): every action goes to the run's
append-only, hash-chained log; an edited sentence goes through the one verification path
again (`verify.gate` via the research checks) against the cards its chapter was bound to; a
sign-off records the reviewer, the time, the exact version hash and the review coverage."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from footnote.errors import NotFound, UsageError
from footnote.models.budget import Budget
from footnote.pipelines.research.checks import check_section, has_key_number, judge_not_used
from footnote.pipelines.research.merge import MergeResult, merge_from_plain
from footnote.pipelines.research.models import ResearchModels
from footnote.pipelines.research.origin_review import (
    ORIGIN_DECISIONS,
    decide_brief,
    undecided_groups,
)
from footnote.pipelines.review.decisions import (
    DECISIONS,
    RESOLUTIONS,
    ReviewState,
    blockers,
    claims_of,
    coverage,
    current_text,
    is_key,
    replay,
    reviewed_brief,
    text_hash,
    verify_chain,
    version_hash,
)
from footnote.serialize import card_to_dict, from_plain, to_plain
from footnote.store.base import ReviewStore
from footnote.store.records import SignOff
from footnote.types import Brief
from footnote.verify import Thresholds
from footnote.verify.draft import Draft, DraftSentence
from footnote.workspace.core import Workspace
from footnote.workspace.research import research_store

EDIT_BUDGET = {"tokens": 20_000, "calls": 8, "seconds": 120.0}
"""What re-checking one edited sentence may spend on the judge."""


def review_store(ws: Workspace) -> ReviewStore:
    """The workspace's review store."""
    return ws.review_store


def pipeline_brief(ws: Workspace, run_id: str) -> Brief:
    """The brief as the pipeline wrote it (what the review starts from)."""
    data = research_store(ws).get_artifact(run_id, "brief")
    if data is None:
        raise NotFound(f"research run {run_id} has no brief yet")
    return from_plain(Brief, data)


def run_merge(ws: Workspace, run_id: str) -> MergeResult:
    """The run's merge artifact (empty for a run without one, e.g. a baseline)."""
    return merge_from_plain(research_store(ws).get_artifact(run_id, "merge"))


def _quoted_snippet(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= limit else text[: limit - 1] + "…") + "”"


def _origin_names(brief: Brief, merge: MergeResult) -> list[tuple[str, str]]:
    """Each undecided group's id and how a blocker names it (its first card's text)."""
    cards = {c.id: c for c in brief.cards}
    out = []
    for g in undecided_groups(merge):
        first = next((cards[m] for m in g.members if m in cards), None)
        quote = _quoted_snippet(first.snippet) if first else ""
        out.append((g.id, f"{len(g.members)} cards quote one figure {quote} (group {g.id})"))
    return out


def _state(ws: Workspace, run_id: str) -> tuple[Brief, ReviewState, list[SignOff]]:
    """The brief with the analyst's origin decisions applied, the review state, sign-offs."""
    brief = pipeline_brief(ws, run_id)
    store = review_store(ws)
    state = replay(store.actions(run_id))
    return decide_brief(brief, run_merge(ws, run_id), state.origins), state, store.signoffs(run_id)


def origin_groups(ws: Workspace, run_id: str) -> list[dict[str, Any]]:
    """The groups whose attribution the merge left undecided: each with its cards (snippet,
    source) side by side, why the code could not decide, and the analyst's decision if any."""
    brief = pipeline_brief(ws, run_id)
    state = replay(review_store(ws).actions(run_id))
    groups = undecided_groups(run_merge(ws, run_id))
    cards = {c.id: c for c in brief.cards}
    missing = {m for g in groups for m in g.members if m not in cards}
    if missing:  # a card the brief does not carry is read from the run's cards
        cards |= {c.id: c for c in research_store(ws).cards(run_id) if c.id in missing}
    out = []
    for g in groups:
        d = state.origins.get(g.id)
        out.append({
            "id": g.id, "members": list(g.members), "basis": g.basis,
            "cards": [card_to_dict(cards[m]) for m in g.members if m in cards],
            "decision": ({"decision": d.get("decision"), "reason": d.get("reason", ""),
                          "by": d.get("by"), "at": d.get("at")} if d else None),
        })  # fmt: skip
    return out


def decide_origin(
    ws: Workspace, run_id: str, group: str, decision: str, actor: str, reason: str
) -> dict[str, Any]:
    """The analyst decides an undecided group: `same` origin, `independent` or `secondary`,
    with a reason; appended to the run's log (the last decision per group counts)."""
    if decision not in ORIGIN_DECISIONS:
        raise UsageError(
            f"unknown origin decision {decision!r}; expected {', '.join(ORIGIN_DECISIONS)}"
        )
    reason = " ".join(reason.split())
    if not reason:
        raise UsageError("an origin decision needs a reason")
    pipeline_brief(ws, run_id)
    found = next((g for g in undecided_groups(run_merge(ws, run_id)) if g.id == group), None)
    if found is None:
        raise NotFound(f"no undecided attribution group {group!r} in this run")
    data = {"decision": decision, "reason": reason, "members": list(found.members)}
    review_store(ws).append_action(run_id, actor, "origin", group, data)
    return next(g for g in origin_groups(ws, run_id) if g["id"] == group)


def _claim(brief: Brief, claim_id: str) -> Any:
    found = claims_of(brief).get(claim_id)
    if found is None:
        raise NotFound(f"no claim {claim_id!r} in this brief")
    return found


def review_view(ws: Workspace, run_id: str) -> dict[str, Any]:
    """Everything the review page shows: each claim with its decision, the cards, conflicts
    with their resolutions, coverage, what blocks the sign-off, and the signed versions."""
    brief, state, signoffs = _state(ws, run_id)
    reviewed = reviewed_brief(brief, state, signoffs)
    sections = []
    for s in brief.sections:
        claims = []
        for c in s.claims:
            d = state.decisions.get(c.id, {})
            claims.append({
                **to_plain(c), "text": current_text(c, state), "original_text": c.text,
                "card_ids": list(d.get("card_ids", c.card_ids)) if d.get("action") == "edit"
                else list(c.card_ids),
                "verdict": d.get("verdict", c.verdict), "key_number": is_key(c, state),
                "decision": d.get("action"), "decided_by": d.get("by"), "seen": c.id in state.seen,
                "ticked": state.ticks.get(c.id) == text_hash(current_text(c, state)),
            })  # fmt: skip
        sections.append({"item_id": s.item_id, "title": s.title, "coverage": s.coverage,
                         "bound_cards": list(s.bound_cards), "claims": claims,
                         "judge_not_used": judge_not_used(s.notes)})  # fmt: skip
    conflicts = [
        {**to_plain(c), "resolution": state.resolutions.get(c.id)} for c in brief.conflicts
    ]
    return {
        "run_id": run_id, "question": brief.question, "review": to_plain(reviewed.review),
        "blockers": blockers(brief, state, signoffs, _origin_names(brief, run_merge(ws, run_id))),
        "sections": sections, "origins": origin_groups(ws, run_id),
        "cards": [card_to_dict(c) for c in brief.cards], "conflicts": conflicts,
        "checklist": to_plain(brief.checklist), "sample_rate": brief.sample_rate,
    }  # fmt: skip


def mark_seen(ws: Workspace, run_id: str, claim_id: str, actor: str) -> bool:
    """Log that the analyst opened a claim (once per claim); whether this was the first time."""
    brief, state, _ = _state(ws, run_id)
    _claim(brief, claim_id)
    if claim_id in state.seen:
        return False
    review_store(ws).append_action(run_id, actor, "seen", claim_id, {})
    return True


def decide(ws: Workspace, run_id: str, claim_id: str, action: str, actor: str,
           note: str = "") -> None:  # fmt: skip
    """Approve or reject a claim (the last decision per claim counts)."""
    if action not in ("approve", "reject"):
        raise UsageError(f"unknown decision {action!r}; expected approve or reject (or edit)")
    brief = pipeline_brief(ws, run_id)
    _claim(brief, claim_id)
    review_store(ws).append_action(run_id, actor, action, claim_id, {"note": note} if note else {})


def _judge_models(ws: Workspace, run_id: str) -> ResearchModels:
    from footnote.models import judge_support

    roles = ws.models
    judge = roles.chat("judge") if roles.is_bound("judge") else None
    return ResearchModels(judge=judge, judge_support=judge_support, run_id=run_id)


def edit_claim(
    ws: Workspace, run_id: str, claim_id: str, text: str, actor: str, *,
    card_ids: list[str] | None = None, models: ResearchModels | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Check an edited sentence through the gate against its chapter's cards; kept as the
    claim's edit when it passes (supported or weak), else refused with the reasons (both logged)."""
    text = " ".join(text.split())
    if not text:
        raise UsageError("the edited sentence is empty")
    brief = pipeline_brief(ws, run_id)
    section, claim = _claim(brief, claim_id)
    if claim.kind != "claim":
        raise UsageError("a conflict line is not edited: resolve the conflict instead")
    item = next((i for i in brief.outline.items if i.id == section.item_id), None)
    if item is None:
        raise NotFound(f"no outline item {section.item_id!r}")
    cards = {c.id: c for c in brief.cards}
    bound = [cards[i] for i in section.bound_cards if i in cards] or [
        cards[i] for i in claim.card_ids if i in cards
    ]
    cites = list(card_ids) if card_ids else list(claim.card_ids)
    labels = tuple(dict.fromkeys(lab for c in bound for lab in c.labels))
    models = models or _judge_models(ws, run_id)
    budget = Budget(int(EDIT_BUDGET["tokens"]), int(EDIT_BUDGET["calls"]), EDIT_BUDGET["seconds"])
    v = ws.settings.verify
    draft = Draft([DraftSentence(text, cites)])
    checked = check_section(item, draft, ["claim"], bound, judge=models.judge_fn(budget, labels),
                            thresholds=Thresholds(v.supported_threshold, v.weak_threshold))  # fmt: skip
    store = review_store(ws)
    if not checked.claims:
        reasons = checked.dropped[0]["reasons"] if checked.dropped else {}
        why = (
            {str(k): str(val) for k, val in dict(reasons).items()}
            if isinstance(reasons, dict)
            else {}
        )
        store.append_action(run_id, actor, "edit_refused", claim_id,
                            {"text": text, "card_ids": cites, "reasons": why,
                             "fabricated": checked.fabricated})  # fmt: skip
        return {"accepted": False, "verdict": "unsupported", "reasons": why,
                "fabricated": checked.fabricated}  # fmt: skip
    new = checked.claims[0]
    data = {"text": new.text, "card_ids": list(new.card_ids), "verdict": new.verdict,
            "checks": dict(new.checks), "key_number": has_key_number(new.text)}  # fmt: skip
    store.append_action(run_id, actor, "edit", claim_id, data)
    return {"accepted": True, "verdict": new.verdict, "reasons": dict(new.checks),
            "card_ids": list(new.card_ids), "fabricated": checked.fabricated}  # fmt: skip


def tick(ws: Workspace, run_id: str, claim_id: str, actor: str, ticked: bool = True) -> None:
    """Tick (or untick) a key number as checked against its source, for its current text."""
    brief, state, _ = _state(ws, run_id)
    _, claim = _claim(brief, claim_id)
    if not is_key(claim, state):
        raise UsageError(f"claim {claim_id} states no key number to tick")
    data = {"ticked": ticked, "text_hash": text_hash(current_text(claim, state))}
    review_store(ws).append_action(run_id, actor, "tick", claim_id, data)


def resolve_conflict(
    ws: Workspace, run_id: str, conflict_id: str, resolution: str, actor: str, *,
    card_id: str | None = None, note: str = "",
) -> None:  # fmt: skip
    """The analyst resolves a conflict: choose one source's value, keep both, or annotate."""
    brief = pipeline_brief(ws, run_id)
    conflict = next((c for c in brief.conflicts if c.id == conflict_id), None)
    if conflict is None:
        raise NotFound(f"no conflict {conflict_id!r} in this brief")
    if resolution not in RESOLUTIONS:
        raise UsageError(f"unknown resolution {resolution!r}; expected {', '.join(RESOLUTIONS)}")
    if resolution == "choose" and card_id not in {v.card_id for v in conflict.values}:
        raise UsageError("choose names one of the conflict's cards (card_id)")
    if resolution == "annotate" and not note.strip():
        raise UsageError("annotate needs a note")
    data: dict[str, Any] = {"resolution": resolution, "note": note.strip()}
    if resolution == "choose":
        data["card_id"] = card_id
    review_store(ws).append_action(run_id, actor, "resolve", conflict_id, data)


def sign_off(ws: Workspace, run_id: str, reviewer: str) -> SignOff:
    """Sign the current version: refused while a key number is unticked, a conflict open or
    an attribution group undecided, or when an action lands between reading the state and
    signing it."""
    store = review_store(ws)
    actions, signoffs = store.actions(run_id), store.signoffs(run_id)
    state = replay(actions)
    merge = run_merge(ws, run_id)
    brief = decide_brief(pipeline_brief(ws, run_id), merge, state.origins)
    blocked = blockers(brief, state, signoffs, _origin_names(brief, merge))
    if blocked:
        raise UsageError("cannot sign off: " + "; ".join(blocked))
    digest = version_hash(brief, state)
    cover = coverage(brief, state, until=None)
    reviewed = reviewed_brief(brief, state, signoffs)
    head = actions[-1].seq if actions else 0
    return store.add_signoff(run_id, reviewer, digest, cover, to_plain(reviewed), after_seq=head)


def signed_brief(ws: Workspace, run_id: str, version: int | None = None) -> Brief:
    """A brief as reviewed: a signed version exactly as signed, or (None) the current state."""
    brief, state, signoffs = _state(ws, run_id)
    if version is None:
        return reviewed_brief(brief, state, signoffs)
    found = next((o for o in signoffs if o.version == version), None)
    if found is None:
        raise NotFound(f"research run {run_id} has no signed version {version}")
    kept = from_plain(Brief, found.brief)
    signed = {"state": "signed", "version": found.version, "version_hash": found.version_hash,
              "reviewer": found.reviewer, "signed_at": found.signed_at, "coverage": found.coverage}  # fmt: skip
    return replace(kept, review={**kept.review, **signed})


def audit_log(ws: Workspace, run_id: str) -> dict[str, Any]:
    """The run's review log for audit: every entry with its chained hash, and whether the
    chain verifies."""
    actions = review_store(ws).actions(run_id)
    ok, detail = verify_chain(actions)
    return {"run_id": run_id, "verified": ok, "detail": detail,
            "head_hash": actions[-1].hash if actions else None,
            "entries": [to_plain(a) for a in actions]}  # fmt: skip


__all__ = ["DECISIONS", "ORIGIN_DECISIONS", "audit_log", "decide", "decide_origin", "edit_claim",
           "mark_seen", "origin_groups", "resolve_conflict", "review_store", "review_view",
           "sign_off", "signed_brief", "tick"]  # fmt: skip
