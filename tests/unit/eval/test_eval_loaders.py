"""Loaders on tiny inline fixtures in the shared-data layout."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from footnote.errors import NotFound, UsageError
from footnote.eval.cases import ANSWER_TYPES
from footnote.eval.loaders import dev_half, load_dataset, materialise_paper, qasper_markdown
from footnote.eval.metrics import score_case
from footnote.eval.verifier import evaluate_verifier, load_claims

PAPER = "Introduction\nWe study fusion of rankings for retrieval. It works well in practice today.\nResults\nHybrid retrieval reached a recall of 0.74 on the test set, ahead of BM25."


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    q = tmp_path / "data" / "qasper-partial"
    q.mkdir(parents=True)
    leval = {
        "instructions": ["What recall did hybrid reach?", "Who funded it?"],
        "outputs": ["0.74", "Unanswerable"],
        "input": PAPER,
    }
    (q / "leval_scientific_qa.jsonl").write_text(json.dumps(leval) + "\n")
    dev = {
        "x1": {
            "article_id": "2001.1",
            "text": "What recall did hybrid reach?",
            "extractive_spans": ["0.74"],
            "evidence": [
                "Hybrid retrieval reached a recall of 0.74 on the test set, ahead of BM25."
            ],
            "highlighted_evidence": [],
        }
    }
    (q / "qasper_dev_extractive_questions.json").write_text(json.dumps(dev))
    hf = {
        "id": "1909.1",
        "title": "T",
        "abstract": "A.",
        "full_text": {"section_name": ["Intro"], "paragraphs": [["P one.", "P two."]]},
        "qas": {
            "question": ["Is it good?", "What GPU?"],
            "question_id": ["aaaaaaaa1", "bbbbbbbb2"],
            "answers": [
                {
                    "answer": [
                        {
                            "unanswerable": False,
                            "yes_no": True,
                            "extractive_spans": [],
                            "free_form_answer": "",
                            "evidence": ["P one."],
                        }
                    ]
                },
                {
                    "answer": [
                        {
                            "unanswerable": True,
                            "yes_no": None,
                            "extractive_spans": [],
                            "free_form_answer": "",
                            "evidence": [],
                        }
                    ]
                },
            ],
        },
    }
    (q / "qasper_train_sample10_hf_format.jsonl").write_text(
        json.dumps(hf, indent=2) + "\n" + json.dumps({**hf, "id": "1909.2"}, indent=2)
    )
    official = {
        "1909.3": {
            "title": "T",
            "abstract": "A.",
            "full_text": [{"section_name": "Intro", "paragraphs": ["P one."]}],
            "qas": [
                {
                    "question": "What?",
                    "question_id": "cccccccc3",
                    "answers": [
                        {
                            "answer": {
                                "unanswerable": False,
                                "yes_no": None,
                                "extractive_spans": ["P one"],
                                "free_form_answer": "",
                                "evidence": ["P one."],
                            }
                        }
                    ],
                }
            ],
        }
    }
    (q / "qasper_sample_small_official_format.json").write_text(json.dumps(official))
    p = tmp_path / "data" / "paperqa-stub-papers"
    p.mkdir()
    rows = [
        {
            "id": "p1",
            "doc": "a.md",
            "question": "Which page has 'Deep learning is great.'?",
            "expect": {"page": 2},
        },
        {"id": "p2", "doc": "a.md", "question": "Jupiter?", "expect": {"refuse": True}},
        {
            "id": "p3",
            "doc": "a.md",
            "question": "XAI?",
            "expect": {"answer_contains_any": ["explainable AI"]},
        },
    ]
    (p / "questions.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    return tmp_path / "data"


def test_qasper_leval_materialises_markdown_and_joins_evidence(data: Path, tmp_path: Path) -> None:
    ds = load_dataset("qasper-leval", data_dir=data, cache_dir=tmp_path / "cache")
    first, second = ds.cases
    md = Path(first.paper).read_text()
    assert md.startswith("## Introduction") and "## Results" in md
    assert first.answer == "0.74" and first.accept == ("0.74",)
    assert first.evidence[0].quote.startswith("Hybrid retrieval")
    assert second.unanswerable and second.type == "unanswerable"


def test_qasper_hf_and_official_formats(data: Path, tmp_path: Path) -> None:
    train = load_dataset("qasper-train", data_dir=data, cache_dir=tmp_path / "c")
    assert len(train.cases) == 4
    yes, gpu = train.cases[:2]
    assert yes.answer == "Yes" and gpu.unanswerable
    assert "## Intro" in Path(yes.paper).read_text()
    official = load_dataset("qasper-official", data_dir=data, cache_dir=tmp_path / "c")
    assert official.cases[0].accept == ("P one",)


def test_qasper_papers_of_the_dev_set_are_written_as_the_loaders_write_them(
    data: Path, tmp_path: Path
) -> None:
    """A dev-set case names a QASPER paper `FILE#ID`; it becomes a Markdown file to ingest."""
    leval = load_dataset("qasper-leval", data_dir=data, cache_dir=tmp_path / "a").cases[0]
    pid = Path(leval.paper).stem
    ref = f"qasper-partial/leval_scientific_qa.jsonl#{pid}"
    md = materialise_paper(data, tmp_path / "b", ref)
    assert md.read_text() == Path(leval.paper).read_text()
    assert md == materialise_paper(data, tmp_path / "b", ref)  # written once
    hf = qasper_markdown(data, "qasper-partial/qasper_train_sample10_hf_format.jsonl#1909.2")
    assert hf.startswith("# T") and "## Intro" in hf and "P two." in hf
    with pytest.raises(NotFound):
        qasper_markdown(data, "qasper-partial/qasper_train_sample10_hf_format.jsonl#1909.9")
    assert (
        materialise_paper(data, tmp_path, "paperqa-stub-papers/a.md")
        == (data / "paperqa-stub-papers" / "a.md").resolve()
    )


def test_paperqa_pages_and_refusals(data: Path, tmp_path: Path) -> None:
    ds = load_dataset("paperqa", data_dir=data, cache_dir=tmp_path)
    page, refuse, xai = ds.cases
    assert page.evidence[0].page == 2 and page.evidence[0].quote == "Deep learning is great."
    assert refuse.unanswerable
    assert xai.accept == ("explainable AI",)
    assert ds.paper_path(xai) == (data / "paperqa-stub-papers" / "a.md").resolve()


def test_unknown_dataset_names_the_loaders(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="qasper-leval"):
        load_dataset("nope", data_dir=tmp_path, cache_dir=tmp_path)


def test_claims_and_deterministic_verifier(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        json.dumps(
            {
                "doc_id": 1,
                "abstract": ["Hybrid retrieval reached a recall of 0.74.", "BM25 got 0.61."],
            }
        )
        + "\n"
        + json.dumps({"doc_id": 2, "abstract": ["Cats sleep a lot."]})
        + "\n"
    )
    claims = tmp_path / "claims.jsonl"
    claims.write_text(
        json.dumps(
            {
                "id": 1,
                "claim": "Hybrid retrieval reached a recall of 0.74 [<|cit|>].",
                "evidence": {"1": [{"sentences": [0], "label": "SUPPORT"}]},
                "cited_doc_ids": [1],
            }
        )
        + "\n"
        + json.dumps(
            {
                "id": 2,
                "claim": "Hybrid retrieval reached a recall of 0.93.",
                "evidence": {"1": [{"sentences": [0], "label": "REFUTE"}]},
                "cited_doc_ids": [1],
            }
        )
        + "\n"
        + json.dumps(
            {"id": 3, "claim": "Dogs bark at night.", "evidence": {}, "cited_doc_ids": [2]}
        )
        + "\n"
    )
    items = load_claims(claims, corpus)
    assert [i.label for i in items] == ["SUPPORT", "REFUTE", "NEI"]
    assert "<|" not in items[0].claim
    result = evaluate_verifier(items, judge=None)
    assert result["deterministic"] == {"accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0}
    with_judge = evaluate_verifier(items, judge=lambda claim, passage: 0.9)
    assert with_judge["judge"]["precision"] == 0.5  # the judge says yes to the unrelated claim too


HELD_OUT = (
    "N18-3011",
    "2020.acl-main.207",
    "2020.acl-main.447",
    "2023.eacl-main.121",
    "elegantpaper",
)


def test_footnote_dev_set_is_packaged_and_splits_by_id_parity(tmp_path: Path) -> None:
    full = load_dataset("footnote-dev", data_dir=tmp_path, cache_dir=tmp_path / "c")
    fit = load_dataset("footnote-dev-fit", data_dir=tmp_path, cache_dir=tmp_path / "c")
    test = load_dataset("footnote-dev-test", data_dir=tmp_path, cache_dir=tmp_path / "c")
    assert len(full.cases) >= 200 and len(test.cases) >= 100
    assert all(c.answer_type in ANSWER_TYPES for c in full.cases)
    assert sum(c.parts >= 2 for c in full.cases) >= 10
    for c in full.cases:  # every gold answer is itself scored right by the evaluator
        shown = {"status": "answered", "answer": c.answer or "", "citations": [],
                 "sentences": [{"text": c.answer}] if c.answer else []}  # fmt: skip
        refusal = {"status": "no_evidence", "answer": "", "citations": [], "sentences": []}
        assert score_case(c, refusal if c.unanswerable else shown)["correct"], c.id
    assert {c.id for c in fit.cases} | {c.id for c in test.cases} == {c.id for c in full.cases}
    assert not {c.id for c in fit.cases} & {c.id for c in test.cases}
    assert all(int(c.id[-1]) % 2 == 0 for c in fit.cases)
    for half in (fit, test):
        assert {c.type for c in half.cases} == {c.type for c in full.cases}
    zh = [c for c in full.cases if c.lang == "zh"]
    assert len(zh) >= max(20, len(full.cases) // 4)
    assert not [c.paper for c in full.cases if any(h in c.paper for h in HELD_OUT)]
    for c in full.cases:
        assert full.paper_path(c) == (tmp_path / c.paper).resolve()
        assert c.unanswerable == (c.type == "unanswerable")
        assert c.unanswerable or (c.accept and c.evidence and all(e.page for e in c.evidence))


REPO = Path(__file__).resolve().parents[3]
SHARED = Path(os.environ.get("FOOTNOTE_EVAL__DATA_DIR") or REPO.parent / "shared" / "data")


@pytest.mark.shared
@pytest.mark.skipif(not (SHARED / "sci-pdfs").is_dir(), reason="needs ../shared/data (absent)")
def test_footnote_dev_quotes_are_on_their_pages() -> None:
    import subprocess
    import sys

    script = REPO / "scripts" / "check-devset"
    done = subprocess.run(
        [sys.executable, str(script), "--data-dir", str(SHARED)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.shared
@pytest.mark.skipif(not (SHARED / "qasper-partial").is_dir(), reason="needs ../shared/data")
def test_check_devset_rejects_held_out_and_misnamed_qasper_papers(tmp_path: Path) -> None:
    import subprocess
    import sys

    base = {"question": "q?", "type": "unanswerable", "answer": None, "answer_type": "name"}
    rows = [
        {**base, "id": "x-1", "paper": "sci-pdfs/pdfs/N18-3011.pdf", "notes": "n"},
        {**base, "id": "x-3", "notes": "QASPER train 2004.07180 (written); n",
         "paper": "qasper-partial/qasper_train_sample10_hf_format.jsonl#1909.00694"},
        {**base, "id": "x-5", "notes": "QASPER dev 1910.06592 (written); n",
         "paper": "qasper-partial/leval_scientific_qa.jsonl#leval-8ffb164081"},
    ]  # fmt: skip
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "check-devset"), str(path), "--data-dir",
         str(SHARED)], capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 1
    fails = {line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("FAIL")}
    assert "uses a paper held out" in fails["x-1"]
    assert "held out" in fails["x-3"]
    assert "notes name 1910.06592, the text is QASPER paper ['1902.09666']" in fails["x-5"]


def test_dev_half_is_the_id_parity() -> None:
    assert dev_half("fd-083") == "test" and dev_half("fd-204") == "fit"
