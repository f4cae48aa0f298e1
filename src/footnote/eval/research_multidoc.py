"""The multi-document research set (`datasets/research/multidoc_dev.jsonl`, issue #32) and the
brief scores `research_metrics` does not give, with the pooled table of a paired run.

- **quote check**: every key-point and conflict-value quote occurs in its paper's text (read as
  `scripts/check-research-data` reads it: QASPER from the shared data, HTML without tags,
  Markdown links as their text; NFKC, whitespace ignored, case and punctuation kept).
- **conflict values shown with scope**: a gold value is shown when a brief conflict holds it
  beside at least one other value of the same gold conflict, and with scope when that brief
  value states a scope.
- **uncovered items stated**: a gold `uncoverable` item is stated when the brief's own list of
  what it does not cover (`not_covered`, checklist items not `covered`, limitation claims,
  section notes) names it: by word overlap (deterministic) or by the judge.
- **inventions**: claims (not limitations) that cite no card of the brief, or state a figure
  none of their cited snippets holds (deterministic); or that no cited snippet supports by the
  judge (judged).
- **pages**: `research_metrics`' `pages` / `claim_pages` where `score_brief` gives them; else
  the same count here (rendered Markdown, and the claims alone: words ÷ 500 + CJK characters ÷
  1,000).
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from footnote.eval.metrics import rate
from footnote.eval.research import DATA
from footnote.eval.research_metrics import Judge
from footnote.textnorm import count_cjk, unmatched_numbers
from footnote.verify import overlap

MULTIDOC = DATA / "multidoc_dev.jsonl"
QUOTE_MAX = 200
WORDS_PER_PAGE = 500
CJK_PER_PAGE = 1000
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9}


def load_multidoc(
    limit: int | None = None, langs: Sequence[str] = (), ids: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The multi-document set, filtered (same fields as `research_dev.jsonl`)."""
    cases = [json.loads(x) for x in MULTIDOC.read_text(encoding="utf-8").splitlines() if x.strip()]
    if ids:
        cases = [c for c in cases if c["id"] in ids]
    if langs:
        cases = [c for c in cases if c["lang"] in langs]
    return cases[:limit] if limit else cases


# -- the papers' texts, read as the data checker reads them ---------------------------------
def _html_text(s: str) -> str:
    s = re.sub(r"(?is)<(script|style|noscript|template)\b.*?</\1\s*>", " ", s)
    s = re.sub(r"(?s)<!--.*?-->", " ", s)
    return html.unescape(re.sub(r"(?s)<[^>]+>", " ", s))


def _md_text(s: str) -> str:
    s = re.sub(r"!?\[([^\]]*)\]\((?:<[^>]*>|[^)\s]*)(?:\s+\"[^\"]*\")?\)", r"\1", s)
    s = re.sub(r"(\*\*|__)", "", s)
    return re.sub(r"(?m)^\s*(>|#+)\s?", "", s)


def _file_text(path: Path) -> str:
    raw = path.read_text(encoding="utf-8")
    head = raw.lstrip()[:200].lower()
    if path.suffix in {".html", ".htm"} or head.startswith(("<!doctype html", "<html")):
        return _html_text(raw)
    return _md_text(raw) if path.suffix == ".md" else raw


def squash(text: str) -> str:
    """NFKC with all whitespace removed: the form quotes are matched in."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def source_texts(refs: Iterable[str], data: Path) -> dict[str, str]:
    """Library ref (`qasper:<id>` or a path under the shared data) → its text; a ref whose
    text cannot be read is left out."""
    from footnote.eval.loaders import _papers_json, _sections

    index = json.loads((DATA / "qasper_papers.json").read_text(encoding="utf-8"))
    out: dict[str, str] = {}
    lines: dict[str, list[str]] = {}
    train: dict[str, dict[str, Any]] = {}
    for ref in sorted(set(refs)):
        if not ref.startswith("qasper:"):
            if (data / ref).is_file():
                out[ref] = _file_text(data / ref)
            continue
        key = ref.split(":", 1)[1]
        entry = index.get(key) or next(
            (e for e in index.values() if e.get("leval_id") == key), None
        )
        if entry is None or not (data / entry["file"]).is_file():
            continue
        src = data / entry["file"]
        if "line" in entry:
            if entry["file"] not in lines:
                lines[entry["file"]] = src.read_text(encoding="utf-8").splitlines()
            out[ref] = json.loads(lines[entry["file"]][entry["line"]])["input"]
            continue
        if not train:
            train = {p.get("id") or p.get("paper_id", ""): p for p in _papers_json(src)}
        paper = train.get(entry["paper_id"])
        if paper is not None:
            parts = [paper.get("title", ""), paper.get("abstract", "")]
            for name, paras in _sections(paper):
                parts += [name or "", *(p for p in paras if p)]
            out[ref] = "\n".join(parts)
    return out


def quote_problems(cases: Sequence[dict[str, Any]], data: Path) -> list[str]:
    """Every quote that is too long, cites a paper outside its question's library, or does not
    occur in that paper's text (empty: all good)."""
    texts = source_texts({r for c in cases for r in c["library"]}, data)
    squashed = {ref: squash(t) for ref, t in texts.items()}
    problems = []
    for case in cases:
        quotes = [(f"{kp['id']}", s["ref"], s["quote"]) for kp in case["key_points"] for s in kp["sources"]]  # fmt: skip
        quotes += [(f"conflict {cf['metric']!r}", v["source"], v["quote"])
                   for cf in case.get("conflicts", []) for v in cf["values"]]  # fmt: skip
        for where, ref, quote in quotes:
            at = f"{case['id']} {where} [{ref}]"
            if ref not in case["library"]:
                problems.append(f"{at}: not in the question's library")
            elif ref not in squashed:
                problems.append(f"{at}: the paper's text cannot be read")
            elif not 0 < len(quote) <= QUOTE_MAX:
                problems.append(f"{at}: quote of {len(quote)} characters")
            elif squash(quote) not in squashed[ref]:
                problems.append(f"{at}: quote not in the paper: {quote[:80]!r}")
    return problems


# -- scores --------------------------------------------------------------------------------
def _claims(brief: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for s in brief["sections"] for c in s["claims"]]


def gold_number(value: dict[str, Any]) -> float:
    """A gold conflict value as a number, scaled by a scale word of its unit."""
    unit = str(value.get("unit", "")).lower()
    scale = next((f for w, f in _SCALE.items() if w in unit), 1.0)
    return float(str(value["value"]).replace(",", "")) * scale


def _same(gold: dict[str, Any], shown: float) -> bool:
    """A brief's value is the gold one (a percentage may be shown as a fraction)."""
    want = gold_number(gold)
    forms = [want] + ([want / 100] if "percent" in str(gold.get("unit", "")).lower() else [])
    return any(math.isclose(w, shown, rel_tol=0.02) for w in forms)


def conflict_values(case: dict[str, Any], brief: dict[str, Any]) -> dict[str, int]:
    """Gold conflict values shown side by side, and shown with a stated scope."""
    total = shown = scoped = 0
    for gold in case.get("conflicts", []):
        values = gold["values"]
        for i, value in enumerate(values):
            total += 1
            hit = None
            for conflict in brief["conflicts"]:
                mine = [v for v in conflict["values"] if _same(value, float(v["value"]))]
                others = [
                    v for j, other in enumerate(values) if j != i
                    for v in conflict["values"] if _same(other, float(v["value"]))
                ]  # fmt: skip
                if mine and others:
                    hit = max(mine, key=lambda v: bool(str(v.get("scope", "")).strip()))
                    if str(hit.get("scope", "")).strip():
                        break
            if hit is not None:
                shown += 1
                scoped += bool(str(hit.get("scope", "")).strip())
    return {"values": total, "shown": shown, "shown_with_scope": scoped}


def uncovered_texts(brief: dict[str, Any]) -> list[str]:
    """What the brief says it does not cover."""
    out = [str(x) for x in brief.get("not_covered", [])]
    for item in brief.get("checklist", []):
        if item.get("state") != "covered":
            out.append(" ".join([str(item.get("title", "")), *map(str, item.get("reasons", []))]))
    for section in brief["sections"]:
        out += [str(n) for n in section.get("notes", [])]
        out += [c["text"] for c in section["claims"] if c.get("kind") == "limitation"]
    # the queries a reason lists ("searched, nothing found (queries: “…”)") repeat the question's
    # words: they say what was searched, not what is uncovered
    out = [re.sub(r"“[^”]*”|\"[^\"]*\"", " ", t) for t in out]
    return [t for t in out if t.strip()]


def uncovered_stated(
    case: dict[str, Any], brief: dict[str, Any], judge: Judge | None, *, min_overlap: float = 0.5
) -> dict[str, Any]:
    """Per gold `uncoverable` item: named by the brief as not covered (deterministic: at least
    `min_overlap` of the item's content words in one statement; judged: P ≥ 0.5)."""
    said = [t.replace(case.get("question", "\0"), " ") for t in uncovered_texts(brief)]
    det = [
        any(overlap(item, t) >= min_overlap for t in said) for item in case.get("uncoverable", [])
    ]
    judged = None
    if judge is not None:
        listing = "The brief states that it does not cover:\n" + "\n".join(f"- {t}" for t in said)
        judged = [bool(said) and judge(f"This is not covered: {item}", listing) >= 0.5
                  for item in case.get("uncoverable", [])]  # fmt: skip
    return {"items": len(det), "stated_det": sum(det),
            "stated_judged": None if judged is None else sum(judged)}  # fmt: skip


def inventions(
    brief: dict[str, Any], judge: Judge | None, *, threshold: float = 0.5
) -> dict[str, Any]:
    """Claims that rest on nothing the brief cites (limitations left out)."""
    cards = {c["id"]: c for c in brief["cards"]}
    claims = [c for c in _claims(brief) if c.get("kind", "claim") != "limitation"]
    det: list[str] = []
    judged: list[str] = []
    for claim in claims:
        snippets = [cards[i]["snippet"] for i in claim["card_ids"] if i in cards]
        if not snippets or unmatched_numbers(claim["text"], "\n".join(snippets)):
            det.append(claim["id"])
        if judge is not None and (
            not snippets or max(judge(claim["text"], s) for s in snippets) < threshold
        ):
            judged.append(claim["id"])
    return {"claims": len(claims), "invented_det": len(det), "invented_det_ids": det,
            "invented_judged": None if judge is None else len(judged),
            "invented_judged_ids": judged}  # fmt: skip


def text_pages(text: str) -> float:
    """Pages of `text`: words ÷ 500 + CJK characters ÷ 1,000."""
    cjk = count_cjk(text)
    words = len(re.findall(r"[^\W\d_]+|\d+", re.sub(r"[\u3400-\u9fff]", " ", text)))
    return round(words / WORDS_PER_PAGE + cjk / CJK_PER_PAGE, 2)


def brief_pages(brief: dict[str, Any]) -> dict[str, float]:
    """Pages of the rendered brief and of its claims alone."""
    from footnote.pipelines.research.markdown import brief_markdown
    from footnote.serialize import brief_from_dict

    claims = "\n".join(c["text"] for c in _claims(brief))
    return {"pages_md": text_pages(brief_markdown(brief_from_dict(brief))),
            "claim_pages": text_pages(claims)}  # fmt: skip


def score_extra(case: dict[str, Any], brief: dict[str, Any], judge: Judge | None) -> dict[str, Any]:
    """The scores of one brief this module adds to `research_metrics.score_brief`."""
    return {"conflict_values": conflict_values(case, brief),
            "uncovered": uncovered_stated(case, brief, judge),
            "inventions": inventions(brief, judge), "pages": brief_pages(brief)}  # fmt: skip


# -- the pooled table ----------------------------------------------------------------------
def summarise(rows: Sequence[dict[str, Any]], cases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """One configuration's pooled figures over its rows (one row per brief or failed run).
    A failed run counts: its key points as omitted, its conflict values as not shown, its
    uncoverable items as not stated; it has no claims, citations or cost."""
    ok = [r for r in rows if "scores" in r]
    kps = [c for r in rows for c in [cases[r["case"]]] for _ in c["key_points"]]

    def labels(key: str) -> list[str]:
        return [lab[key] for r in ok for lab in r["scores"]["key_points"] if lab[key] is not None]

    def per_brief(get: Callable[[dict[str, Any]], float | None], digits: int = 2) -> str:
        vals = [v for r in ok if (v := get(r)) is not None]
        if not vals:
            return "–"
        return f"{sum(vals) / len(vals):.{digits}f} (max {max(vals):.{digits}f})"

    judged = labels("judged")
    gold_values = sum(
        sum(len(cf["values"]) for cf in cases[r["case"]].get("conflicts", [])) for r in rows
    )
    items = sum(len(cases[r["case"]].get("uncoverable", [])) for r in rows)
    extra = [r["scores"]["extra"] for r in ok]
    cites = [r["scores"]["citations"] for r in ok]

    def pooled(key: str) -> tuple[float, int]:
        k = sum(round((c[key] or 0) * c["citations"]) for c in cites if c[key] is not None)
        return k, sum(c["citations"] for c in cites if c[key] is not None)

    claims = sum(e["inventions"]["claims"] for e in extra)
    judged_inv = [e["inventions"]["invented_judged"] for e in extra]
    unc_judged = [e["uncovered"]["stated_judged"] for e in extra]
    return {
        "briefs": len(ok), "failed": len(rows) - len(ok),
        "coverage_det": rate(labels("deterministic").count("supported"), len(kps), "key points"),
        "coverage_judged": rate(judged.count("supported"), len(kps), "key points")
        if judged else None,
        "conflict_values_with_scope": rate(sum(e["conflict_values"]["shown_with_scope"] for e in extra), gold_values, "gold conflict values"),
        "conflict_values_shown": rate(sum(e["conflict_values"]["shown"] for e in extra), gold_values, "gold conflict values"),
        "uncovered_stated_det": rate(sum(e["uncovered"]["stated_det"] for e in extra), items, "uncoverable items"),
        "uncovered_stated_judged": rate(sum(v for v in unc_judged if v is not None), items, "uncoverable items")
        if any(v is not None for v in unc_judged) else None,
        "inventions_det": rate(sum(e["inventions"]["invented_det"] for e in extra), claims, "claims"),
        "inventions_judged": rate(sum(v for v in judged_inv if v is not None), claims, "claims")
        if any(v is not None for v in judged_inv) else None,
        "precision_det": rate(*pooled("precision_det"), "citations"),
        "precision_judged": rate(*pooled("precision_judged"), "citations")
        if any(c["precision_judged"] is not None for c in cites) else None,
        "tokens": per_brief(lambda r: r["scores"]["cost"]["tokens"], 0),
        "calls": per_brief(lambda r: r["scores"]["cost"]["calls"], 1),
        "minutes": per_brief(lambda r: r["scores"]["cost"]["minutes"]),
        "pages": per_brief(_pages),
        "claim_pages": per_brief(lambda r: _pages(r, "claim_pages")),
    }  # fmt: skip


def _pages(row: dict[str, Any], key: str = "pages") -> float:
    """research_metrics' `pages` (or `claim_pages`) when it gives a number, else this module's."""
    theirs = row["scores"].get(key)
    if isinstance(theirs, int | float) and not isinstance(theirs, bool):
        return float(theirs)
    mine = row["scores"]["extra"]["pages"]
    return float(mine["pages_md"] if key == "pages" else mine["claim_pages"])


COLUMNS = (
    "briefs", "failed", "coverage_det", "coverage_judged", "conflict_values_with_scope",
    "conflict_values_shown", "uncovered_stated_det", "uncovered_stated_judged", "inventions_det",
    "inventions_judged", "precision_det", "precision_judged", "tokens", "calls", "minutes",
    "pages", "claim_pages",
)  # fmt: skip


def _cell(value: Any) -> str:
    if isinstance(value, dict) and "n" in value:
        if value["value"] is None:
            return "– n=0"
        return f"{value['value']:.3f} [{value['lo']:.2f}–{value['hi']:.2f}] n={value['n']}"
    return "–" if value is None else str(value)


def table(results: dict[tuple[str, str], dict[str, Any]], judge: str | None) -> str:
    """The issue's table: one row per (set, configuration), every rate with its n and 95 %
    Wilson interval, and a note on what each figure counts and who judged."""
    head = "| set | config | " + " | ".join(COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 2)]
    for (set_name, config), s in results.items():
        lines.append(
            f"| {set_name} | {config} | " + " | ".join(_cell(s[c]) for c in COLUMNS) + " |"
        )
    note = (
        "rates: value [95% Wilson interval] n=denominator, pooled over briefs; a failed run counts "
        "its key points as omitted, its conflict values as not shown, its uncoverable items as "
        "not stated. coverage: key points supported (deterministic: a cited snippet holds a gold "
        "quote; judged: the judge on the nearest claims). conflict values: gold values shown in a "
        "brief conflict beside another gold value of the same metric (with scope: the brief states "
        "the value's scope). inventions: claims citing no card or a figure absent from their "
        "snippets (det), or supported by no cited snippet (judged). precision: supporting "
        "citations / citations. tokens, calls, minutes, pages: mean (max) per brief; pages = "
        "research_metrics' `pages` (rendered Markdown: words / 500 + CJK characters / 1,000), "
        "claim_pages = the chapters' claims alone. "
        f"Judged figures: judged by {judge or 'no judge (judged columns empty)'}."
    )
    return "\n".join([*lines, "", note])
