"""Datasets for `footnote eval`: a generic JSONL file, or a named loader over the shared data.

Named loaders convert on the fly. Papers that come as text (QASPER) are written once as
Markdown files under the cache folder and ingested from there.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from footnote.config import shared_data_candidates
from footnote.errors import NotFound, UsageError
from footnote.eval.cases import Case, GoldEvidence, read_cases
from footnote.textnorm import normalise


@dataclass(frozen=True)
class Dataset:
    """Cases plus the folder their `paper` paths are relative to."""

    name: str
    cases: list[Case]
    root: Path

    def paper_path(self, case: Case) -> Path:
        """The paper file of a case."""
        p = Path(case.paper).expanduser()
        return p if p.is_absolute() else (self.root / p).resolve()


def default_data_dir() -> Path:
    """The first of `shared_data_candidates()` that exists (else the last one)."""
    candidates = shared_data_candidates()
    return next((p.resolve() for p in candidates if p.is_dir()), candidates[-1])


# -- QASPER -----------------------------------------------------------------------------
_HEADING_END = (".", ",", ";", ":", "?", "!", ")", "]")


def _leval_markdown(text: str) -> str:
    """LEval paper text (one paragraph or heading per line) as Markdown."""
    out = []
    for line in text.split("\n"):
        s = line.strip()
        if not s:
            continue
        if len(s) < 100 and s[0].isupper() and not s.endswith(_HEADING_END) and "$" not in s:
            level = "###" if ":::" in s else "##"
            out.append(f"{level} {s.split(':::')[-1].strip()}")
        else:
            out.append(s)
    return "\n\n".join(out) + "\n"


def _qtype(question: str, answer: str | None, evidence: list[str]) -> str:
    if answer is None:
        return "unanswerable"
    if any("FLOAT SELECTED" in e for e in evidence):
        return "table_value"
    q = question.lower()
    if q.startswith(("why", "how do", "how does", "how is", "how are", "explain")):
        return "concept"
    return "fact_lookup"


def _dev_index(data: Path) -> dict[str, list[dict[str, Any]]]:
    path = data / "qasper-partial" / "qasper_dev_extractive_questions.json"
    if not path.is_file():
        return {}
    index: dict[str, list[dict[str, Any]]] = {}
    for q in json.loads(path.read_text(encoding="utf-8")).values():
        index.setdefault(normalise(q["text"]), []).append(q)
    return index


def load_qasper_leval(data: Path, cache: Path, path: Path | None = None) -> Dataset:
    """LEval `scientific_qa` full texts (QASPER); gold evidence joined from the dev questions."""
    src = path or data / "qasper-partial" / "leval_scientific_qa.jsonl"
    dev = _dev_index(data)
    out = cache / "qasper-leval"
    out.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []
    seen_q: set[tuple[str, str]] = set()
    for line in src.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        text: str = row["input"]
        paper_id = "leval-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
        md = out / f"{paper_id}.md"
        if not md.exists():
            md.write_text(_leval_markdown(text), encoding="utf-8")
        norm_text = normalise(text)
        for i, (question, gold) in enumerate(
            zip(row["instructions"], row["outputs"], strict=False)
        ):
            if (paper_id, question) in seen_q:
                continue
            seen_q.add((paper_id, question))
            answer = None if gold.strip().lower() == "unanswerable" else gold.strip()
            paras: list[str] = []
            spans: list[str] = []
            for q in dev.get(normalise(question), []):
                ev = [e for e in q["evidence"] if e and normalise(e[:200]) in norm_text]
                if ev:
                    paras += ev
                    spans += [s for s in q["extractive_spans"] if s]
            paras = list(dict.fromkeys(paras))
            cases.append(
                Case(
                    id=f"{paper_id}-q{i}",
                    paper=str(md),
                    question=question,
                    type=_qtype(question, answer, paras),
                    answer=answer,
                    accept=tuple(dict.fromkeys(spans)),
                    evidence=tuple(
                        GoldEvidence(None, p) for p in paras if "FLOAT SELECTED" not in p
                    ),
                    notes="gold evidence from QASPER dev" if paras else "",
                )
            )
    return Dataset("qasper-leval", cases, out)


def _papers_json(path: Path) -> Iterator[dict[str, Any]]:
    """Papers of an official QASPER JSON (dict by id) or of concatenated HF-schema objects."""
    text = path.read_text(encoding="utf-8")
    dec, i = json.JSONDecoder(), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        obj, i = dec.raw_decode(text, i)
        if "qas" in obj:
            yield obj
        else:
            for pid, paper in obj.items():
                yield {"id": pid, **paper}


def _sections(paper: dict[str, Any]) -> list[tuple[str, list[str]]]:
    ft = paper["full_text"]
    if isinstance(ft, dict):  # HF schema: parallel lists
        return list(zip(ft["section_name"], ft["paragraphs"], strict=False))
    return [(s["section_name"], s["paragraphs"]) for s in ft]


def _qas(paper: dict[str, Any]) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    qas = paper["qas"]
    if isinstance(qas, dict):  # HF schema
        for q, qid, ans in zip(qas["question"], qas["question_id"], qas["answers"], strict=False):
            yield q, qid, list(ans["answer"])
    else:
        for q in qas:
            yield q["question"], q["question_id"], [a["answer"] for a in q["answers"]]


def _gold_text(a: dict[str, Any]) -> str | None:
    if a.get("unanswerable"):
        return None
    if a.get("yes_no") is not None:
        return "Yes" if a["yes_no"] else "No"
    spans = [s for s in a.get("extractive_spans", []) if s]
    return ", ".join(spans) if spans else (a.get("free_form_answer") or "").strip() or None


def _official_markdown(paper: dict[str, Any]) -> str:
    """A QASPER paper (official or HF schema) as Markdown: title, abstract, sections."""
    parts = [f"# {paper.get('title', paper['id'])}", "## Abstract", paper.get("abstract", "")]
    for section, paras in _sections(paper):
        parts.append(f"## {(section or 'Body').split(':::')[-1].strip()}")
        parts += [p for p in paras if p and p.strip()]
    return "\n\n".join(parts) + "\n"


def load_qasper_official(path: Path, cache: Path, name: str = "qasper-official") -> Dataset:
    """QASPER papers in the official v0.3 JSON or the HF schema; all annotators kept.

    A question is a refusal case when every annotator marked it unanswerable.
    """
    out = cache / name
    out.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []
    for paper in _papers_json(path):
        md = out / f"{paper['id']}.md"
        if not md.exists():
            md.write_text(_official_markdown(paper), encoding="utf-8")
        for j, (question, qid, answers) in enumerate(_qas(paper)):
            golds = [_gold_text(a) for a in answers]
            texts = [g for g in golds if g is not None]
            evidence = list(dict.fromkeys(e for a in answers for e in a.get("evidence", []) if e))
            spans = [s for a in answers for s in a.get("extractive_spans", []) if s]
            yes_no = [
                ("Yes" if a["yes_no"] else "No") for a in answers if a.get("yes_no") is not None
            ]
            answer = texts[0] if texts else None
            cases.append(
                Case(
                    id=f"{paper['id']}-{qid[:8]}-{j}",
                    paper=str(md),
                    question=question,
                    type=_qtype(question, answer, evidence),
                    answer=answer,
                    accept=tuple(dict.fromkeys([*spans, *yes_no])),
                    evidence=tuple(
                        GoldEvidence(None, e) for e in evidence if "FLOAT SELECTED" not in e
                    ),
                    notes="mixed: some annotators said unanswerable"
                    if None in golds and texts
                    else "",
                    answers=tuple(texts[1:]),
                )
            )
    return Dataset(name, cases, out)


# -- PaperQA stub papers --------------------------------------------------------------------
def load_paperqa(data: Path, cache: Path) -> Dataset:
    """PaperQA's test questions about its stub papers (page, yes/no, refusal, figure-only).

    `answer_contains_all` becomes `accept_all` (every string required), `at_least_n_of` the
    `accept_min`; a question whose answer needs a figure stays answerable, typed `figure`."""
    root = data / "paperqa-stub-papers"
    cases: list[Case] = []
    for line in (root / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        exp = q["expect"]
        accept = list(exp.get("answer_contains_any", []))
        accept_all = tuple(exp.get("answer_contains_all", []))
        evidence: tuple[GoldEvidence, ...] = ()
        answer: str | None = next(iter([*accept, *accept_all]), None)
        qtype = "fact_lookup"
        notes = q.get("note", "")
        if "page" in exp:
            quote = re.search(r"'(.+)'", q["question"])
            statement = quote.group(1) if quote else ""
            evidence = (GoldEvidence(int(exp["page"]), statement),)
            answer, accept = statement, [statement]
        if exp.get("requires"):
            # the answer is in a figure: still answerable (a text-only pipeline may miss it)
            qtype, notes = "figure", exp["requires"]
        if exp.get("refuse"):
            answer, qtype, accept, accept_all = None, "unanswerable", [], ()
            notes = notes or "unrelated question"
        cases.append(
            Case(q["id"], q["doc"], q["question"], qtype, answer, tuple(accept), evidence, notes,
                 accept_all=accept_all, accept_min=int(exp.get("at_least_n_of", 1)))
        )  # fmt: skip
    return Dataset("paperqa", cases, root)


# -- the project's own development set -------------------------------------------------------
DEV_SET = Path(__file__).resolve().parent / "datasets" / "footnote_dev.jsonl"
"""Hand-written cases over the shared PDFs and PaperQA stub papers (datasets/README.md)."""


def dev_half(case_id: str) -> str:
    """`fit` for an even numeric id suffix, `test` for an odd one (thresholds are fitted on `fit`)."""
    digits = re.search(r"(\d+)$", case_id)
    if not digits:
        raise UsageError(f"dev-set id {case_id!r} has no numeric suffix to split on")
    return "fit" if int(digits.group(1)) % 2 == 0 else "test"


def qasper_markdown(data: Path, ref: str) -> str:
    """The Markdown text of a QASPER paper named `FILE#ID` under the shared data folder:
    `qasper-partial/leval_scientific_qa.jsonl#leval-<sha10>` (an LEval full text, named as
    `load_qasper_leval` names it) or `qasper-partial/<official or HF file>#<paper id>`."""
    file, _, pid = ref.partition("#")
    path = data / file
    if not pid or not path.is_file():
        raise NotFound(f"QASPER paper {ref!r} not found under {data}")
    if pid.startswith("leval-"):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = json.loads(line)["input"] if line.strip() else ""
            if text and "leval-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:10] == pid:
                return _leval_markdown(text)
    else:
        for paper in _papers_json(path):
            if paper["id"] == pid:
                return _official_markdown(paper)
    raise NotFound(f"QASPER paper {pid!r} is not in {path}")


def materialise_paper(data: Path, cache: Path, ref: str) -> Path:
    """The file of a case's `paper`: a path under the data folder as it is, a QASPER paper
    (`FILE#ID`) written once as Markdown under `cache/footnote-dev/` (the ingester reads it as
    page 1)."""
    if "#" not in ref:
        return (data / ref).resolve()
    md = cache / "footnote-dev" / (ref.partition("#")[2] + ".md")
    if not md.exists():
        md.parent.mkdir(parents=True, exist_ok=True)
        md.write_text(qasper_markdown(data, ref), encoding="utf-8")
    return md.resolve()


def load_footnote_dev(data: Path, cache: Path, half: str | None = None) -> Dataset:
    """The development set; `paper` paths resolve against the shared data folder, QASPER
    papers (`FILE#ID`) are written as Markdown under the cache folder when the data is there."""
    cases = read_cases(DEV_SET)
    if half:
        cases = [c for c in cases if dev_half(c.id) == half]
    if (data / "qasper-partial").is_dir():
        cases = [
            replace(c, paper=str(materialise_paper(data, cache, c.paper))) if "#" in c.paper else c
            for c in cases
        ]
    name = "footnote-dev" + (f"-{half}" if half else "")
    return Dataset(name, cases, data.resolve())


Loader = Callable[[Path, Path], Dataset]
LOADERS: dict[str, Loader] = {
    "footnote-dev": load_footnote_dev,
    "footnote-dev-fit": lambda d, c: load_footnote_dev(d, c, "fit"),
    "footnote-dev-test": lambda d, c: load_footnote_dev(d, c, "test"),
    "qasper-leval": load_qasper_leval,
    "qasper-official": lambda d, c: load_qasper_official(
        d / "qasper-partial" / "qasper_sample_small_official_format.json", c
    ),
    "qasper-train": lambda d, c: load_qasper_official(
        d / "qasper-partial" / "qasper_train_sample10_hf_format.jsonl", c, "qasper-train"
    ),
    "paperqa": load_paperqa,
}


def load_dataset(
    spec: str, *, data_dir: Path, cache_dir: Path, root: Path | None = None
) -> Dataset:
    """A named loader (`footnote-dev[-fit|-test]`, `qasper-*`, `paperqa`) or a JSONL path."""
    if spec in LOADERS:
        if not data_dir.is_dir():
            raise NotFound(f"shared data folder {data_dir} not found: set eval.data_dir")
        return LOADERS[spec](data_dir, cache_dir)
    path = Path(spec).expanduser()
    if not path.is_file():
        names = ", ".join(sorted(LOADERS))
        raise UsageError(f"{spec!r} is neither a .jsonl file nor a dataset name ({names})")
    return Dataset(path.stem, read_cases(path), (root or path.parent).resolve())
