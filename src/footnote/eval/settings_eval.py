"""Settings extraction measured against the hand-written gold (datasets/settings/README.md).

`footnote eval settings` ingests each gold paper (QASPER text as the `qasper-*` loaders write
it, the PDF, the two Chinese Markdown papers), runs `footnote settings` on it and scores:
settings precision and recall (micro over values, and per field), "not stated" accuracy and its
converse, citation accuracy of matched values, cross-check findings against the hand-checked
ones, and seconds per paper. Scoring follows the README's recommended rules.
"""

from __future__ import annotations

import json
import math
import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from footnote.errors import NotFound
from footnote.eval.loaders import load_qasper_leval, load_qasper_official
from footnote.pipelines.reproduce.fields import FIELD_NAMES
from footnote.pipelines.reproduce.table import SettingsTable
from footnote.textnorm import CJK_IDEOGRAPHS, has_cjk, normalise, parse_number
from footnote.workspace import Workspace

GOLD_DIR = Path(__file__).resolve().parent / "datasets" / "settings"
DATASETS_DIR = GOLD_DIR.parent


@dataclass(frozen=True)
class GoldPaper:
    """One gold table: the paper reference, its language, and per field the values or None."""

    paper: str
    lang: str
    fields: dict[str, list[str] | None]
    quotes: dict[str, list[str]]
    source: dict[str, Any] = field(default_factory=dict)


def load_gold(path: Path = GOLD_DIR / "settings_gold.jsonl") -> list[GoldPaper]:
    """The gold tables."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        fields: dict[str, list[str] | None] = {}
        quotes: dict[str, list[str]] = {}
        for name in FIELD_NAMES:
            v = row["fields"][name]
            fields[name] = None if v == "not_stated" else [str(x) for x in v["values"]]
            if v != "not_stated":
                quotes[name] = [v["quote"], *v.get("extra_quotes", [])]
        out.append(GoldPaper(row["paper"], row["lang"], fields, quotes, row.get("source") or {}))
    return out


def load_crosschecks(path: Path = GOLD_DIR / "crosschecks.jsonl") -> list[dict[str, Any]]:
    """The hand-checked cross-checks."""
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def paper_file(gold: GoldPaper, data: Path, cache: Path) -> Path:
    """The file footnote ingests for a gold paper (QASPER papers written once into `cache`)."""
    ref = gold.paper
    if ref.startswith("qasper:"):
        if gold.source.get("leval_id"):
            md = cache / "qasper-leval" / f"{gold.source['leval_id']}.md"
            if not md.exists():
                load_qasper_leval(data, cache)
        else:
            md = cache / "qasper-train" / f"{ref.split(':', 1)[1]}.md"
            if not md.exists():
                hf = data / "qasper-partial" / "qasper_train_sample10_hf_format.jsonl"
                load_qasper_official(hf, cache, "qasper-train")
        path = md
    elif ref.startswith("settings/"):
        path = DATASETS_DIR / ref
    else:
        path = data / ref
    if not path.is_file():
        raise NotFound(f"gold paper {ref}: no file {path}")
    return path


# -- matching (README "Recommended scoring") ------------------------------------------------
_TIME_HOURS = {"minute": 1 / 60, "min": 1 / 60, "hour": 1.0, "h": 1.0, "hr": 1.0, "day": 24.0,
               "week": 168.0}  # fmt: skip
_UNIT = re.compile(r"([a-z]+)s?$")


def _norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).replace("$", "")
    t = re.sub(r"\\text\w*\s*\{([^{}]*)\}", r"\1", t)
    t = re.sub(r"_\{([^{}]*)\}|_(\w)", r"\1\2", t)
    t = normalise(t)
    return re.sub(r"[\s_\-]+", " ", t).strip()


def _unit(text: str) -> str:
    """The unit family of a value ("" when none): time is hours, else the trailing word."""
    m = _UNIT.search(_norm(re.sub(r"\d", " ", text)).strip())
    word = m.group(1) if m else ""
    word = word[:-1] if word.endswith("s") and word[:-1] in _TIME_HOURS else word
    return "time" if word in _TIME_HOURS else word


def _hours(text: str, number: float) -> float:
    m = _UNIT.search(_norm(re.sub(r"\d", " ", text)).strip())
    word = (m.group(1) if m else "").rstrip("s")
    return number * _TIME_HOURS.get(word, 1.0)


def _ratio(text: str) -> str | None:
    m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*:\s*(\d+)\s*", text)
    return ":".join(m.groups()) if m else None


def value_matches(pred: str, gold: str, lang: str = "en") -> bool:
    """Whether a predicted value matches a gold value (numbers numerically, names loosely)."""
    np_, ng = _norm(pred), _norm(gold)
    if not np_ or not ng:
        return False
    if np_ == ng:
        return True
    rp, rg = _ratio(pred), _ratio(gold)
    if rp or rg:
        return rp == rg
    a, b = parse_number(pred), parse_number(gold)
    if a is not None and b is not None:
        ua, ub = _unit(pred), _unit(gold)
        if ua and ub and ua != ub:
            return False
        if ua == ub == "time":
            a, b = _hours(pred, a), _hours(gold, b)
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12)
    if a is not None or b is not None:
        return False
    if has_cjk(np_ + ng):
        return np_ in ng or ng in np_
    return (
        _whole_word(np_, ng) or _whole_word(ng, np_) or np_.replace(" ", "") == ng.replace(" ", "")
    )


def _whole_word(part: str, whole: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(part)}(?![a-z0-9])", whole) is not None


@dataclass
class PaperScore:
    """One paper's counts."""

    paper: str
    lang: str
    pred_values: int = 0
    pred_matched: int = 0
    gold_values: int = 0
    gold_matched: int = 0
    gold_not_stated: int = 0
    not_stated_right: int = 0
    stated_as_not_stated: int = 0
    cited_right: int = 0
    seconds: float = 0.0
    error: str | None = None
    per_field: dict[str, dict[str, int]] = field(default_factory=dict)


def score_table(gold: GoldPaper, table: SettingsTable, seconds: float) -> PaperScore:
    """Count matches of one predicted table against its gold (README rules 1-6)."""
    s = PaperScore(gold.paper, gold.lang, seconds=seconds)
    for name in FIELD_NAMES:
        g = gold.fields[name]
        pred = table.row(name).values
        f = s.per_field.setdefault(name, {"pred": 0, "pred_ok": 0, "gold": 0, "gold_ok": 0})
        f["pred"] += len(pred)
        s.pred_values += len(pred)
        if g is None:
            s.gold_not_stated += 1
            s.not_stated_right += int(not pred)
            continue
        if not pred:
            s.stated_as_not_stated += 1
        ok_pred = [v for v in pred if any(value_matches(v.value, x, gold.lang) for x in g)]
        ok_gold = [x for x in g if any(value_matches(v.value, x, gold.lang) for v in pred)]
        s.pred_matched += len(ok_pred)
        s.gold_values += len(g)
        s.gold_matched += len(ok_gold)
        f.update(pred_ok=f["pred_ok"] + len(ok_pred), gold=f["gold"] + len(g),
                 gold_ok=f["gold_ok"] + len(ok_gold))  # fmt: skip
        quotes = [_norm(q) for q in gold.quotes.get(name, [])]
        for v in ok_pred:
            cited = _norm(v.quote)
            if any(q in cited or cited in q for q in quotes if q and cited):
                s.cited_right += 1
    return s


def _ratio_of(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def summarise(scores: Sequence[PaperScore]) -> dict[str, Any]:
    """Micro-averaged figures over the papers that ran, errors counted on their own."""
    ok = [s for s in scores if s.error is None]
    tot = {k: sum(getattr(s, k) for s in ok) for k in (
        "pred_values", "pred_matched", "gold_values", "gold_matched", "gold_not_stated",
        "not_stated_right", "stated_as_not_stated", "cited_right")}  # fmt: skip
    per_field: dict[str, dict[str, float | None]] = {}
    for name in FIELD_NAMES:
        c = {
            k: sum(s.per_field.get(name, {}).get(k, 0) for s in ok)
            for k in ("pred", "pred_ok", "gold", "gold_ok")
        }
        per_field[name] = {"precision": _ratio_of(c["pred_ok"], c["pred"]),
                           "recall": _ratio_of(c["gold_ok"], c["gold"]), **c}  # fmt: skip
    stated_fields = sum(len(FIELD_NAMES) - s.gold_not_stated for s in ok)
    seconds = sorted(s.seconds for s in ok)
    return {
        "papers": len(scores),
        "errors": [{"paper": s.paper, "error": s.error} for s in scores if s.error],
        "precision": _ratio_of(tot["pred_matched"], tot["pred_values"]),
        "recall": _ratio_of(tot["gold_matched"], tot["gold_values"]),
        "not_stated_accuracy": _ratio_of(tot["not_stated_right"], tot["gold_not_stated"]),
        "stated_missed": _ratio_of(tot["stated_as_not_stated"], stated_fields),
        "citation_accuracy": _ratio_of(tot["cited_right"], tot["pred_matched"]),
        "by_lang": {
            lang: {
                "precision": _ratio_of(
                    sum(s.pred_matched for s in ok if s.lang == lang),
                    sum(s.pred_values for s in ok if s.lang == lang),
                ),
                "recall": _ratio_of(
                    sum(s.gold_matched for s in ok if s.lang == lang),
                    sum(s.gold_values for s in ok if s.lang == lang),
                ),
            }
            for lang in sorted({s.lang for s in ok})
        },
        "seconds_per_paper": {
            "mean": round(sum(seconds) / len(seconds), 2) if seconds else None,
            "median": seconds[len(seconds) // 2] if seconds else None,
            "max": seconds[-1] if seconds else None,
        },
        "per_field": per_field,
        "counts": tot,
    }


# -- cross-checks ------------------------------------------------------------------------------
def _where_key(text: str) -> set[str]:
    """The location words of a check ("表 1", "Table 8", a section name, a row label)."""
    t = _norm(text)
    keys = set(re.findall(r"(?:table|表)\s*\d+", t))
    keys |= {w for w in re.findall(rf"[a-z{CJK_IDEOGRAPHS}][\w{CJK_IDEOGRAPHS}\-]{{3,}}", t)}
    return keys


def match_crosschecks(
    found: dict[str, list[dict[str, Any]]], gold: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """Findings vs the hand-checked entries: same paper, same stated value, a shared location
    word; precision/recall of mismatches and agreement on `adds_up`."""
    matched: list[tuple[dict[str, Any], dict[str, Any]]] = []
    used: set[int] = set()
    for g in gold:
        for _i, f in enumerate(found.get(g["paper"], [])):
            if id(f) in used or not math.isclose(
                f["stated"]["value"], float(g["stated"]), rel_tol=1e-6
            ):
                continue
            if _where_key(f["where"]) & _where_key(g["where"]):
                matched.append((g, f))
                used.add(id(f))
                break
    pred_mis = [f for fs in found.values() for f in fs if not f["adds_up"]]
    gold_mis = [g for g in gold if not g["adds_up"]]
    hit_mis = [(g, f) for g, f in matched if not g["adds_up"] and not f["adds_up"]]
    real = [g for g in gold_mis if "deliberate" not in str(g.get("note", ""))]
    return {
        "gold_checks": len(gold),
        "found_checks": sum(len(v) for v in found.values()),
        "matched_checks": len(matched),
        "adds_up_agreement": _ratio_of(
            sum(g["adds_up"] == f["adds_up"] for g, f in matched), len(matched)
        ),
        "mismatches_found": len(pred_mis),
        "mismatches_gold": len(gold_mis),
        "mismatches_confirmed": len(hit_mis),
        "mismatch_precision": _ratio_of(len(hit_mis), len(pred_mis)),
        "mismatch_recall": _ratio_of(len(hit_mis), len(gold_mis)),
        "real_mismatch_recall": _ratio_of(sum(1 for g, _ in hit_mis if g in real), len(real)),
        "confirmed": [
            {
                "paper": g["paper"],
                "where": g["where"],
                "stated": g["stated"],
                "recomputed": f["recomputed"],
            }
            for g, f in hit_mis
        ],
        "unconfirmed_mismatches": [
            {
                "paper": p,
                "where": f["where"],
                "stated": f["stated"]["value"],
                "recomputed": f["recomputed"],
            }
            for p, fs in found.items()
            for f in fs
            if not f["adds_up"] and not any(f is m for _, m in hit_mis)
        ],
    }


def run_settings_eval(
    ws: Workspace,
    *,
    data: Path,
    cache: Path,
    extractor: str | None = None,
    papers: Sequence[str] = (),
    limit: int | None = None,
    progress: Callable[[str], None] = lambda _m: None,
) -> dict[str, Any]:
    """Ingest, extract and score every gold paper; the cross-checks too."""
    import asyncio

    from footnote.workspace.reproduce import crosscheck_report, settings_table

    gold = [g for g in load_gold() if not papers or any(p in g.paper for p in papers)]
    gold = gold[:limit] if limit else gold
    scores: list[PaperScore] = []
    found: dict[str, list[dict[str, Any]]] = {}
    kind = ""
    for g in gold:
        try:
            path = paper_file(g, data, cache)
            report = ws.ingest([path])
            if report.failed:
                raise NotFound(f"ingest failed: {report.failed[0].error}")
            sid = report.results[0].source.id  # type: ignore[union-attr]
            t0 = time.monotonic()
            table = asyncio.run(settings_table(ws, sid, extractor=extractor))
            kind = table.extractor
            scores.append(score_table(g, table, round(time.monotonic() - t0, 2)))
            found[g.paper] = crosscheck_report(ws, sid)["checks"]
            progress(f"{g.paper}: {scores[-1].pred_matched}/{scores[-1].pred_values} values right")
        except Exception as exc:  # an error is an error: counted, never a score
            scores.append(PaperScore(g.paper, g.lang, error=f"{type(exc).__name__}: {exc}"))
            progress(f"{g.paper}: error {exc}")
    gold_cc = [c for c in load_crosschecks() if c["paper"] in {g.paper for g in gold}]
    out = summarise(scores)
    out["extractor"] = kind
    out["model"] = ws.settings.models.model_dump().get(ws.settings.reproduce.role, {}).get("url")
    out["crosschecks"] = match_crosschecks(found, gold_cc)
    out["per_paper"] = [
        {"paper": s.paper, "precision": _ratio_of(s.pred_matched, s.pred_values),
         "recall": _ratio_of(s.gold_matched, s.gold_values), "seconds": s.seconds,
         "error": s.error}
        for s in scores
    ]  # fmt: skip
    return out
