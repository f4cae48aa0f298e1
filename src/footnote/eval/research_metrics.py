"""Scores of one research brief against its dev-set case.

- **key-point coverage** (DeepResearchGym-style): each key point is *supported*, *omitted* or
  *contradicted* by the brief. Deterministic: a cited card's snippet contains (or is contained
  in) one of the point's gold quotes; contradicted when a claim about the same thing states a
  different figure of the same unit. Judged: the judge model's P(supported) of the key point
  given the brief's claims nearest to it (≥ 0.5), contradicted as above.
- **claim citation precision / recall** (AstaBench-style): recall = claims with ≥ 1 supporting
  citation ÷ claims; precision = supporting citations ÷ citations; deterministic (the gate's
  code checks: numbers and word overlap) and judged (the judge per claim–snippet pair).
- **resolution**: citations that resolve to a card of the brief whose snippet is the text at
  its span in its snapshot (by construction 1.0: measured anyway).
- **conflicts**: gold conflicts shown side by side (a brief conflict holding both figures);
  apparent conflicts wrongly reported as conflicts.
- **uncovered stated**: the brief names what it does not cover.
- **reprints**: members of a gold reprint group counted as independent (at most one may be).
- **cost**: tokens, model calls, searches, fetches, minutes.
- **pages**: the brief's Markdown in pages (`length.estimate_pages`: 500 words or 1,000 CJK
  characters a page), and its chapters' claims alone (`claim_pages`, what the seed's "8–15
  pages of checked claims" counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from footnote.pipelines.research.length import estimate_pages
from footnote.pipelines.research.markdown import brief_markdown
from footnote.serialize import brief_from_dict
from footnote.textnorm import (
    contains,
    fuzzy_contains,
    looks_like_year,
    quantities,
    unmatched_numbers,
)
from footnote.verify import overlap

Judge = Callable[[str, str], float]
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


def _claims(brief: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for s in brief["sections"] for c in s["claims"]]


def _gold_value(v: dict[str, Any]) -> float:
    unit = str(v.get("unit", "")).lower()
    scale = next((f for w, f in _SCALE.items() if w in unit), 1.0)
    return float(str(v["value"]).replace(",", "")) * scale


def _figures(text: str) -> list[float]:
    return [q.value for q in quantities(text) if not looks_like_year(q)]


def _quote_hit(quote: str, snippet: str) -> bool:
    """A gold quote is in a card (or the card in it); a near match counts only with its figures."""
    if contains(snippet, quote) or contains(quote, snippet):
        return True
    return fuzzy_contains(snippet, quote) and not unmatched_numbers(quote, snippet)


def keypoint_labels(
    case: dict[str, Any], brief: dict[str, Any], judge: Judge | None
) -> list[dict[str, Any]]:
    """Per key point: the deterministic and (with a judge) judged label."""
    cards = {c["id"]: c for c in brief["cards"]}
    claims = _claims(brief)
    out = []
    for kp in case["key_points"]:
        quotes = [s["quote"] for s in kp["sources"]]
        cited = [cards[i]["snippet"] for c in claims for i in c["card_ids"] if i in cards]
        det = "supported" if any(_quote_hit(q, s) for q in quotes for s in cited) else "omitted"
        near = sorted(claims, key=lambda c: -overlap(kp["text"], c["text"]))[:3]
        kp_figs = _figures(kp["text"])
        contradicted = any(
            overlap(kp["text"], c["text"]) >= 0.5
            and _figures(c["text"])
            and kp_figs
            and not any(
                math.isclose(a, b, rel_tol=0.01) for a in kp_figs for b in _figures(c["text"])
            )
            for c in near
        )
        if det == "omitted" and contradicted:
            det = "contradicted"
        judged = None
        if judge is not None:
            # what the brief shows for its nearest claims: the sentence, who says it, the quote
            shown = [
                f"{c['text']} (source: {', '.join(cards[i].get('source_title', '') for i in c['card_ids'] if i in cards)})"
                for c in near
            ]  # fmt: skip
            p = judge(kp["text"], "\n".join(shown)) if near else 0.0
            judged = "supported" if p >= 0.5 else ("contradicted" if contradicted else "omitted")
        out.append({"id": kp["id"], "deterministic": det, "judged": judged})
    return out


def citation_scores(
    brief: dict[str, Any], snapshot_text: Callable[[dict[str, Any]], str | None],
    judge: Judge | None, *, threshold: float = 0.6,
) -> dict[str, Any]:  # fmt: skip
    """Claim-level citation precision/recall (deterministic and judged) and resolution."""
    cards = {c["id"]: c for c in brief["cards"]}
    claims = [c for c in _claims(brief)]
    n_cites = resolved = det_ok = judged_ok = 0
    det_claims = judged_claims = 0
    for claim in claims:
        det_any = judged_any = False
        for cid in claim["card_ids"]:
            n_cites += 1
            card = cards.get(cid)
            if card is None:
                continue
            text = snapshot_text(card)
            span = card.get("span")
            if text is not None and span and text[span[0] : span[1]] == card["snippet"]:
                resolved += 1
            ok = not unmatched_numbers(claim["text"], card["snippet"]) and (
                contains(card["snippet"], claim["text"])
                or overlap(claim["text"], card["snippet"]) >= 0.6
            )
            det_ok += ok
            det_any |= ok
            if judge is not None:
                source = card.get("source_title", "")
                good = (
                    judge(
                        claim["text"],
                        f"Source: {source}\n{card['snippet']}" if source else card["snippet"],
                    )
                    >= threshold
                )
                judged_ok += good
                judged_any |= good
        det_claims += det_any
        judged_claims += judged_any
    n = len(claims)

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 4) if b else None

    return {
        "claims": n, "citations": n_cites, "resolution": ratio(resolved, n_cites),
        "precision_det": ratio(det_ok, n_cites), "recall_det": ratio(det_claims, n),
        "precision_judged": ratio(judged_ok, n_cites) if judge else None,
        "recall_judged": ratio(judged_claims, n) if judge else None,
    }  # fmt: skip


def conflict_scores(case: dict[str, Any], brief: dict[str, Any]) -> dict[str, Any]:
    """Gold conflicts shown side by side; apparent conflicts reported as real ones."""

    def shown(values: Sequence[dict[str, Any]]) -> bool:
        wanted = [_gold_value(v) for v in values]
        for c in brief["conflicts"]:
            have = [v["value"] for v in c["values"]]
            if all(any(math.isclose(w, h, rel_tol=0.02) for h in have) for w in wanted):
                return True
        return False

    gold = case.get("conflicts", [])
    apparent = case.get("apparent_conflicts", [])
    return {
        "gold": len(gold), "shown": sum(shown(c["values"]) for c in gold),
        "apparent": len(apparent), "false_conflicts": sum(shown(c["values"]) for c in apparent),
        "reported": len(brief["conflicts"]),
    }  # fmt: skip


def _path_of(url: str) -> str:
    parts = urlsplit(url)
    host = (parts.hostname or "").removesuffix(".example")
    return f"/{host}{parts.path}"


def reprint_scores(case: dict[str, Any], brief: dict[str, Any]) -> dict[str, Any]:
    """Gold reprint groups: how many of their members the brief counts as independent."""
    groups = case.get("reprint_groups", [])
    status: dict[str, set[str]] = {}
    for card in brief["cards"]:
        status.setdefault(_path_of(card.get("url", "")), set()).add(card["independence"])
    violations = seen = 0
    for group in groups:
        members = [p for p in group if p in status]
        seen += len(members)
        independent = [p for p in members if "independent" in status[p]]
        violations += max(0, len(independent) - 1)
    return {"groups": len(groups), "members_seen": seen, "counted_independent_extra": violations}


def cost(brief: dict[str, Any]) -> dict[str, float]:
    """What the brief cost."""
    used = brief.get("budget_used", {})
    return {
        "tokens": float(used.get("tokens", 0)), "calls": float(used.get("calls", 0)),
        "searches": float(used.get("searches", 0)), "fetches": float(used.get("fetches", 0)),
        "minutes": round(float(used.get("seconds", 0)) / 60, 3),
    }  # fmt: skip


def pages(brief: dict[str, Any]) -> dict[str, float | None]:
    """Pages of the whole brief as Markdown (None for a record that is not a whole brief), and
    of its chapters' claims alone."""
    try:
        whole: float | None = estimate_pages(brief_markdown(brief_from_dict(brief)))
    except (KeyError, TypeError, ValueError):
        whole = None
    return {
        "pages": whole,
        "claim_pages": estimate_pages("\n".join(c["text"] for c in _claims(brief))),
    }


def score_brief(
    case: dict[str, Any], brief: dict[str, Any], snapshot_text: Callable[[dict[str, Any]], str | None],
    judge: Judge | None,
) -> dict[str, Any]:  # fmt: skip
    """Every score of one brief."""
    labels = keypoint_labels(case, brief, judge)

    def share(key: str, value: str) -> float | None:
        vals = [lab[key] for lab in labels if lab[key] is not None]
        return round(sum(v == value for v in vals) / len(vals), 4) if vals else None

    return {
        "key_points": labels,
        "coverage_det": share("deterministic", "supported"),
        "omitted_det": share("deterministic", "omitted"),
        "contradicted_det": share("deterministic", "contradicted"),
        "coverage_judged": share("judged", "supported"),
        "omitted_judged": share("judged", "omitted"),
        "contradicted_judged": share("judged", "contradicted"),
        "citations": citation_scores(brief, snapshot_text, judge),
        "conflicts": conflict_scores(case, brief),
        "uncovered_stated": bool(brief["not_covered"])
        or any(c["state"] == "uncovered" for c in brief["checklist"]),
        "reprints": reprint_scores(case, brief),
        "cost": cost(brief),
        **pages(brief),
        "wrapped_up": brief["wrapped_up"],
    }


def summarise(
    records: Sequence[dict[str, Any]], mode: str, seed_tokens: int = 886_000
) -> dict[str, Any]:
    """Means over one mode's briefs; errors are counted, never dropped or scored as zero."""
    ok = [r for r in records if r["mode"] == mode and "scores" in r]
    errors = [r for r in records if r["mode"] == mode and "error" in r]

    def mean(get: Callable[[dict[str, Any]], Any]) -> float | None:
        vals = [v for r in ok if (v := get(r["scores"])) is not None]
        return round(sum(vals) / len(vals), 4) if vals else None

    conflicts_gold = sum(r["scores"]["conflicts"]["gold"] for r in ok)
    tokens = mean(lambda s: s["cost"]["tokens"])
    return {
        "mode": mode, "briefs": len(ok), "errors": len(errors),
        "coverage_det": mean(lambda s: s["coverage_det"]),
        "coverage_judged": mean(lambda s: s["coverage_judged"]),
        "contradicted_judged": mean(lambda s: s["contradicted_judged"]),
        "citation_resolution": mean(lambda s: s["citations"]["resolution"]),
        "precision_det": mean(lambda s: s["citations"]["precision_det"]),
        "recall_det": mean(lambda s: s["citations"]["recall_det"]),
        "precision_judged": mean(lambda s: s["citations"]["precision_judged"]),
        "recall_judged": mean(lambda s: s["citations"]["recall_judged"]),
        "conflicts_shown": f"{sum(r['scores']['conflicts']['shown'] for r in ok)}/{conflicts_gold}",
        "false_conflicts": sum(r["scores"]["conflicts"]["false_conflicts"] for r in ok),
        "uncovered_stated": mean(lambda s: 1.0 if s["uncovered_stated"] else 0.0),
        "reprints_counted_extra": sum(r["scores"]["reprints"]["counted_independent_extra"] for r in ok),
        "tokens": tokens, "calls": mean(lambda s: s["cost"]["calls"]),
        "searches": mean(lambda s: s["cost"]["searches"]), "fetches": mean(lambda s: s["cost"]["fetches"]),
        "minutes": mean(lambda s: s["cost"]["minutes"]),
        "pages": mean(lambda s: s.get("pages")), "claim_pages": mean(lambda s: s.get("claim_pages")),
        "tokens_vs_seed": round(tokens / seed_tokens, 4) if tokens is not None else None,
        "wrapped_up": sum(1 for r in ok if r["scores"]["wrapped_up"]),
    }  # fmt: skip
