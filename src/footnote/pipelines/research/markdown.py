"""The brief as Markdown: coverage first when the run wrapped up, chapters with footnoted claims,
conflicts side by side with their scopes, the checklist, and the evidence cards."""

from __future__ import annotations

from footnote.pipelines.export.document import public_location
from footnote.pipelines.research.checks import judge_not_used
from footnote.types import INSUFFICIENT_MARK, Brief, BriefSection, ChecklistItem, EvidenceCard


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def brief_markdown(brief: Brief) -> str:
    """The whole brief as Markdown (claims footnoted to cards: `[^n]`)."""
    cards = {c.id: c for c in brief.cards}
    numbers: dict[str, int] = {}

    def mark(card_id: str) -> str:
        numbers.setdefault(card_id, len(numbers) + 1)
        return f"[^{numbers[card_id]}]"

    out = [f"# {brief.question}", ""]
    kind = (
        "baseline (one search, one model call)"
        if brief.mode == "baseline"
        else brief.outline.template
    )
    out.append(f"*Report kind: {kind}. Review state: {brief.review.get('state', 'unreviewed')}.*")
    out.append("")
    if brief.wrapped_up or brief.not_covered:
        out.append("> **What this brief does not cover.**" + (
            " The run reached its budget and wrapped up." if brief.wrapped_up else ""))  # fmt: skip
        out += [f"> - {_cell(n)}" for n in brief.not_covered]
        out.append("")
    unjudged = [s.title for s in brief.sections if judge_not_used(s.notes)]
    if unjudged:
        out += [f"> **Judge not used** for: {_cell(', '.join(unjudged))}. Support there rests on "
                "the deterministic checks only; a claim not quoted from its card is at most "
                "weakly supported.", ""]  # fmt: skip
    conflicts_by_item: dict[str, list[int]] = {}
    for n, c in enumerate(brief.conflicts):
        for item_id in c.item_ids:
            conflicts_by_item.setdefault(item_id, []).append(n)
    checks = {c.item_id: c for c in brief.checklist}
    for section in brief.sections:
        out += [f"## {section.title}", "", _coverage_line(section, checks.get(section.item_id)), ""]
        out += [f"*{_cell(n)}.*\n" for n in judge_not_used(section.notes)]
        body = [c for c in section.claims if c.kind != "conflict"]
        for claim in body:
            flags = " **(check this figure)**" if claim.key_number else ""
            weak = f" *{INSUFFICIENT_MARK}*" if claim.verdict == "weak" else ""
            out.append(f"{claim.text}{''.join(mark(i) for i in claim.card_ids)}{weak}{flags}")
            out.append("")
        for n in conflicts_by_item.get(section.item_id, []):
            conflict = brief.conflicts[n]
            out += [f"**{conflict.heading}.** {conflict.note}.", "",
                    "| source | figure | year | scope | card |", "|---|---|---|---|---|"]  # fmt: skip
            for v in conflict.values:
                card = cards.get(v.card_id)
                out.append(
                    f"| {_cell(v.source_title)} | {_cell(v.text)} | {v.year or ''} | "
                    f"{_cell(v.scope) or '(not stated)'} | {mark(v.card_id) if card else v.card_id} |"
                )
            out.append("")
        if not section.claims:
            out += ["*Nothing in this chapter passed the checks.*", ""]
    out += [
        "## Checklist",
        "",
        "| item | state | independent sources | reasons |",
        "|---|---|---|---|",
    ]
    for item in brief.checklist:
        out.append(f"| {_cell(item.title)} | {item.state} | {item.independent_sources} | "
                   f"{_cell('; '.join(item.reasons))} |")  # fmt: skip
    out += ["", f"Key figures are flagged for a mandatory check; {brief.sample_rate:.0%} of the other "
            "claims are sampled for review.", ""]  # fmt: skip
    used = brief.budget_used
    out += [
        f"*Cost: {int(used.get('tokens', 0))} tokens, {int(used.get('calls', 0))} model calls, "
        f"{int(used.get('searches', 0))} searches, {int(used.get('fetches', 0))} fetches, "
        f"{used.get('seconds', 0) / 60:.1f} minutes.*",
        "",
        "## Evidence",
        "",
    ]
    for card_id, n in numbers.items():
        card = cards.get(card_id)
        if card is not None:
            out.append(f"[^{n}]: {_card_line(card)}")
    return "\n".join(out).rstrip() + "\n"


def _coverage_line(section: BriefSection, check: ChecklistItem | None) -> str:
    """A chapter's coverage, the evidence it rests on and, when it is not covered, why (a short
    chapter says what it lacks rather than padding)."""
    n = len(section.bound_cards)
    line = f"*Coverage: {section.coverage}; written from {n} evidence card{'s' if n != 1 else ''}.*"
    if section.coverage != "covered" and check is not None and check.reasons:
        line += f" *Not covered: {_cell('; '.join(check.reasons))}.*"
    return line


def _card_line(card: EvidenceCard) -> str:
    """A card's note: its source first (title, file name or the web page's URL, locator), then
    the snippet; the card id last, as an anchor. A library file's server path is never shown."""
    date = card.published_at or "undated"
    independence = {"independent": "", "same_origin": "; a copy of another source",
                    "unconfirmed": "; independence unconfirmed"}[card.independence]  # fmt: skip
    url, file_name = public_location(card.url)
    where = f" ({_cell(file_name)})" if file_name else ""
    if url and url not in card.locator:
        where += f", <{url}>" if " " not in url else f", {_cell(url)}"
    return (f"**{_cell(card.source_title)}**{where}, {_cell(card.locator)}: "
            f"“{_cell(card.snippet)}” ({date}; {card.source_type}{independence}); card `{card.id}`")  # fmt: skip
