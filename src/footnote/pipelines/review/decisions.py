"""The review state of a brief, replayed from its append-only action log.

Actions: `seen` (a claim was opened), `approve` / `edit` / `reject` (the last one per claim
counts), `tick` (a flagged key number was checked against its source; valid for the text it
was ticked on; a decision or a tick also counts the claim as seen), `resolve` (a conflict:
choose one value, keep both, or annotate), `origin` (a group of cards whose attribution the
code left undecided: same origin, independent or secondary; the last one per group counts),
`sign_off`.
The version hash covers the brief as the pipeline wrote it, its cards and every decision, so
any change to what the brief says makes a new version that needs a new sign-off."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from footnote.serialize import to_plain
from footnote.store.records import GENESIS_HASH, ReviewAction, SignOff, action_hash
from footnote.types import Brief, BriefSection, Claim, sha256_hex

DECISIONS = ("approve", "edit", "reject")
RESOLUTIONS = ("choose", "keep_both", "annotate")


def text_hash(text: str) -> str:
    """What a tick is bound to: the claim's text at the time (an edit needs a new tick)."""
    return sha256_hex(text.encode())[:16]


@dataclass
class ReviewState:
    """What the log says so far."""

    seen: set[str] = field(default_factory=set)
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    ticks: dict[str, str] = field(default_factory=dict)
    resolutions: dict[str, dict[str, Any]] = field(default_factory=dict)
    origins: dict[str, dict[str, Any]] = field(default_factory=dict)
    """undecided attribution group id -> the analyst's decision (`decision`, `reason`, …)"""
    started_at: str | None = None
    last_at: str | None = None


def replay(actions: Sequence[ReviewAction]) -> ReviewState:
    """The review state after these actions, in order."""
    state = ReviewState()
    for a in actions:
        state.started_at = state.started_at or a.at
        state.last_at = a.at
        if a.action == "seen":
            state.seen.add(a.target)
        elif a.action in DECISIONS:
            state.seen.add(a.target)
            state.decisions[a.target] = {"action": a.action, "by": a.actor, "at": a.at, **a.data}
        elif a.action == "tick":
            state.seen.add(a.target)
            if a.data.get("ticked", True):
                state.ticks[a.target] = str(a.data.get("text_hash", ""))
            else:
                state.ticks.pop(a.target, None)
        elif a.action == "resolve":
            state.resolutions[a.target] = dict(a.data)
        elif a.action == "origin":
            state.origins[a.target] = {**a.data, "by": a.actor, "at": a.at}
    return state


def claims_of(brief: Brief) -> dict[str, tuple[BriefSection, Claim]]:
    """Every claim of the brief by id, with its section."""
    return {c.id: (s, c) for s in brief.sections for c in s.claims}


def current_text(claim: Claim, state: ReviewState) -> str:
    """The claim's text after the analyst's edit, if any."""
    d = state.decisions.get(claim.id)
    return str(d["text"]) if d and d["action"] == "edit" else claim.text


def _canonical(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                      default=str).encode()  # fmt: skip


def version_hash(brief: Brief, state: ReviewState) -> str:
    """sha256 of the brief as written (cards included) and every decision that changes it."""
    plain = to_plain(replace(brief, review={}))
    decisions = {
        k: {f: v for f, v in d.items() if f not in ("at", "by")} for k, d in state.decisions.items()
    }
    content: dict[str, Any] = {"brief": plain, "decisions": decisions, "ticks": state.ticks,
                               "resolutions": state.resolutions}  # fmt: skip
    if state.origins:  # absent when none: versions signed before origin decisions keep their hash
        content["origins"] = {
            k: {f: v for f, v in d.items() if f not in ("at", "by")}
            for k, d in state.origins.items()
        }
    return sha256_hex(_canonical(content))


def _minutes(start: str | None, end: str | None) -> float:
    if not start or not end:
        return 0.0
    a = datetime.fromisoformat(start.replace("Z", "+00:00"))
    b = datetime.fromisoformat(end.replace("Z", "+00:00"))
    return round(max(0.0, (b - a).total_seconds()) / 60, 2)


def coverage(brief: Brief, state: ReviewState, until: str | None = None) -> dict[str, Any]:
    """Claims seen / approved / edited / rejected, key numbers ticked, the sample seen,
    conflicts resolved and the minutes from the first review action to `until` (or the last)."""
    claims = [c for _, c in claims_of(brief).values()]
    actions = [state.decisions.get(c.id, {}).get("action") for c in claims]
    key = [c for c in claims if is_key(c, state)]
    sampled = [c for c in claims if c.sampled]
    return {
        "claims": len(claims),
        "seen": sum(c.id in state.seen for c in claims),
        "approved": actions.count("approve"),
        "edited": actions.count("edit"),
        "rejected": actions.count("reject"),
        "undecided": actions.count(None),
        "key_numbers": len(key),
        "key_numbers_ticked": sum(_ticked(c, state) for c in key),
        "sampled": len(sampled),
        "sampled_seen": sum(c.id in state.seen for c in sampled),
        "sample_rate": brief.sample_rate,
        "conflicts": len(brief.conflicts),
        "conflicts_resolved": sum(c.id in state.resolutions for c in brief.conflicts),
        "minutes": _minutes(state.started_at, until or state.last_at),
    }


def is_key(claim: Claim, state: ReviewState) -> bool:
    """Whether a claim states a key number (flagged by the checklist, or added by an edit)."""
    return claim.key_number or bool(state.decisions.get(claim.id, {}).get("key_number"))


def _ticked(claim: Claim, state: ReviewState) -> bool:
    rejected = state.decisions.get(claim.id, {}).get("action") == "reject"
    return rejected or state.ticks.get(claim.id) == text_hash(current_text(claim, state))


def _quoted(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= limit else text[: limit - 1] + "…") + "”"


def blockers(
    brief: Brief, state: ReviewState, signoffs: Sequence[SignOff],
    origin_groups: Sequence[tuple[str, str]] = (),
) -> list[str]:  # fmt: skip
    """Why this version cannot be signed yet (empty: it can), each naming the claim by its
    text: a sampled claim never opened, a key number not ticked, a disagreement not resolved, an
    undecided attribution group (`origin_groups`: id and how to name it) not decided."""
    out = []
    for _, claim in claims_of(brief).values():
        if claim.sampled and claim.id not in state.seen:
            out.append(f"sampled claim not opened: {_quoted(current_text(claim, state))}")
        if is_key(claim, state) and not _ticked(claim, state):
            out.append(f"key number not ticked: {_quoted(current_text(claim, state))}")
    for conflict in brief.conflicts:  # figures of different settings dispute nothing
        if conflict.kind == "disagree" and conflict.id not in state.resolutions:
            out.append(f"conflict not resolved: {conflict.metric or conflict.id}")
    for gid, name in origin_groups:
        if gid not in state.origins:
            out.append(f"attribution undecided: {name}")
    if signoffs and signoffs[-1].version_hash == version_hash(brief, state):
        out.append(f"this exact version is already signed (v{signoffs[-1].version})")
    return out


def reviewed_brief(brief: Brief, state: ReviewState, signoffs: Sequence[SignOff]) -> Brief:
    """The brief with the analyst's decisions applied: rejected claims left out, edited ones
    replaced (with their re-check), and the review record (state, versions, coverage)."""
    sections = []
    for s in brief.sections:
        claims = []
        for c in s.claims:
            d = state.decisions.get(c.id)
            if d and d["action"] == "reject":
                continue
            if d and d["action"] == "edit":
                c = replace(c, text=str(d["text"]), card_ids=tuple(d.get("card_ids", c.card_ids)),
                            verdict=d.get("verdict", c.verdict), checks=dict(d.get("checks", {})),
                            key_number=is_key(c, state))  # fmt: skip
            claims.append(c)
        sections.append(replace(s, claims=tuple(claims)))
    digest = version_hash(brief, state)
    last = signoffs[-1] if signoffs else None
    if last is not None and last.version_hash == digest:
        status = "signed"
    elif last is not None:
        status = "changed_after_signoff"
    else:
        status = "in_review" if state.started_at else "unreviewed"
    review: dict[str, object] = {
        "state": status, "version_hash": digest,
        "version": last.version if status == "signed" and last else len(signoffs) + 1,
        "reviewer": last.reviewer if status == "signed" and last else None,
        "signed_at": last.signed_at if status == "signed" and last else None,
        "coverage": last.coverage if status == "signed" and last else coverage(brief, state),
        "decisions": {k: {"action": v["action"], "by": v.get("by"), "at": v.get("at"),
                          **({"original": claims_of(brief)[k][1].text} if v["action"] != "approve"
                             and k in claims_of(brief) else {})}
                      for k, v in state.decisions.items()},
        "resolutions": state.resolutions,
        "signoffs": [{"version": o.version, "version_hash": o.version_hash,
                      "reviewer": o.reviewer, "signed_at": o.signed_at} for o in signoffs],
    }  # fmt: skip
    return replace(brief, sections=tuple(sections), review=review)


def verify_chain(actions: Sequence[ReviewAction]) -> tuple[bool, str]:
    """Whether every entry's hash matches its content and the entry before; where it breaks."""
    prev = GENESIS_HASH
    for n, a in enumerate(actions, 1):
        if a.seq != n:
            return False, f"entry {n}: sequence number {a.seq} (a gap or reordering)"
        if a.prev_hash != prev:
            return False, f"entry {n}: prev_hash does not match the entry before"
        if action_hash(prev, a.run_id, a.seq, a.at, a.actor, a.action, a.target, a.data) != a.hash:
            return False, f"entry {n}: hash does not match its content"
        prev = a.hash
    return True, f"{len(actions)} entries, chain intact"
