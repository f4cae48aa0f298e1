"""What the ask composer is shown: gold evidence in the shown top-k, today vs each strategy.

Two sets, each split in two halves (knobs are chosen on `fit`, numbers reported on `test`):

- **QASPER**: the 10 train papers and the LEval dev papers of `bench/retrieval_quality.py`, one
  paragraph = one block. A question counts when a gold evidence paragraph maps to a block.
  `hit@4`: a gold paragraph is among the 4 shown; `recall@4`: share of gold paragraphs shown
  (the issue's "gold paragraph in top 4"). Halves: even / odd question position.
- **footnote-dev**: the project's development set, its papers ingested by the real ingester
  into `bench/out/ask_retrieval/dev` (once). A case counts when it has gold evidence; it is hit
  when a shown block holds a gold quote on its page (`eval.metrics.evidence_found`, fuzzy
  allowed). Halves: the set's own fit / test.

Strategies are `pipelines.ask.retrieve.Strategy` values; `today` is the order the pipeline used
before (search order). The bilingual strategy needs a translator (the compose model); without
`--translate` it is not run. Usage:

    python bench/ask_retrieval.py [--only qasper|dev] [--translate N]

`--translate N`: also run the bilingual strategy with the embedded model on at most N dev
cases whose question and paper languages differ (each translation is one short model call;
calls, prompt tokens and seconds are printed).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import OUT, CachedE5
from footnote.config import RetrievalSettings
from footnote.eval.cases import Case
from footnote.eval.loaders import default_data_dir, dev_half, load_dataset
from footnote.eval.metrics import evidence_found
from footnote.index import Searcher, SearchFilters
from footnote.models.roles import RoleEmbedder
from footnote.pipelines.ask.retrieve import DEFAULT, TODAY, Retriever, Strategy, Translate
from footnote.pipelines.ask.understand import understand_by_rules
from footnote.store.sqlite import SqliteStore
from retrieval_quality import build, leval_dev, norm, qasper_train

SHOWN = 4
STRATEGIES: list[Strategy] = [
    TODAY,
    replace(TODAY, name="pool 24 (no reorder)", pool=24),
    replace(TODAY, name="prose first", prose_first=True),
    replace(TODAY, name="windows w=0.4", pool=24, windows=True, window_weight=0.4),
    replace(TODAY, name="windows w=0.6", pool=24, windows=True, window_weight=0.6),
    replace(TODAY, name="windows w=0.8", pool=24, windows=True, window_weight=0.8),
    replace(DEFAULT, name="windows+prose w=0.6", sections=False, bilingual=False, excerpt_chars=0),
    replace(DEFAULT, name="windows+prose+sections w=0.6 (default)", bilingual=False),
    replace(DEFAULT, name="same, shown as 700-char excerpts", bilingual=False, excerpt_chars=700),
    replace(DEFAULT, name="same, 1200-char excerpts", bilingual=False, excerpt_chars=1200),
    replace(TODAY, name="scan (paper windows fused, no reorder)", pool=24, scan=True),
    replace(TODAY, name="scan + prose first", pool=24, scan=True, prose_first=True),
    replace(DEFAULT, name="scan + windows+prose+sections", bilingual=False, scan=True),
]


def score_shown(shown: Sequence[str], gold: set[str]) -> tuple[float, float]:
    """(hit, recall) of the shown texts against the gold texts."""
    found = gold & set(shown)
    return float(bool(found)), len(found) / len(gold)


def qasper(strategies: Sequence[Strategy]) -> None:
    e5 = CachedE5()
    papers = qasper_train() + leval_dev()
    tmp = Path(tempfile.mkdtemp())
    store = SqliteStore(tmp / "q.db")
    ids = build(store, papers)
    from footnote.index import Indexer

    embedder = RoleEmbedder(e5, url=e5.name, external=False)
    indexer = Indexer(store, embedder, RetrievalSettings(), tmp / "idx")
    for sid in ids.values():
        indexer.index_source(sid)
    e5.save()
    searcher = Searcher(
        store,
        embedder,
        RetrievalSettings(),
        tmp / "idx",
        lexical=indexer.lexical,
        vectors=indexer.vectors,
    )
    texts = {sid: {norm(b.text) for b in store.iter_blocks(sid)} for sid in ids.values()}

    def search(q: str, k: int, f: SearchFilters):  # type: ignore[no-untyped-def]
        return searcher.search(q, k=k, filters=f)

    questions = []
    for pid, _paras, qs in papers:
        for qi, (q, gold_text) in enumerate(qs):
            gold = {t for t in gold_text if t in texts[ids[pid]]}
            if gold:
                questions.append((ids[pid], q, gold, "fit" if qi % 2 == 0 else "test"))
    print(
        f"\n## QASPER ({len(questions)} questions with mapped gold paragraphs; shown = top {SHOWN})\n"
    )
    print(
        "| strategy | fit hit@4 | fit recall@4 | test hit@4 | test recall@4 | test recall@8 | ms/q |"
    )
    print("|---|---|---|---|---|---|---|")
    for s in strategies:
        r = Retriever(search, store, evidence_k=SHOWN, k=8, cosine_band=(0.75, 0.92), strategy=s)
        agg = {"fit": [0.0, 0.0, 0], "test": [0.0, 0.0, 0]}
        r8 = 0.0
        t0 = time.perf_counter()
        for sid, q, gold, half in questions:
            got = r(q, understand_by_rules(q), SearchFilters(source_ids=(sid,)))
            shown = [norm(e.block.text) for e in got.evidence]
            hit, rec = score_shown(shown[:SHOWN], gold)
            a = agg[half]
            a[0] += hit
            a[1] += rec
            a[2] += 1
            if half == "test":
                r8 += score_shown(shown[:8], gold)[1]
        ms = (time.perf_counter() - t0) * 1000 / len(questions)
        f, t = agg["fit"], agg["test"]
        print(
            f"| {s.name} | {f[0] / f[2]:.3f} | {f[1] / f[2]:.3f} | {t[0] / t[2]:.3f} | "
            f"{t[1] / t[2]:.3f} | {r8 / t[2]:.3f} | {ms:.0f} |"
        )
    e5.save()
    store.close()


def _dev_workspace():  # type: ignore[no-untyped-def]
    from footnote.workspace import Workspace

    ws = Workspace.open(OUT / "ask_retrieval" / "dev")
    ds = load_dataset("footnote-dev", data_dir=default_data_dir(), cache_dir=ws.dir / "cache")
    paths = sorted({ds.paper_path(c) for c in ds.cases})
    report = ws.ingest(paths)
    sources = {str(r.path.resolve()): r.source.id for r in report.results if r.source is not None}
    return ws, ds, sources


def dev_hit(case: Case, shown: Sequence[object]) -> bool:
    blocks = [{"page": e.page, "text": e.text} for e in shown]  # type: ignore[attr-defined]
    return any(evidence_found(g, b) for g in case.evidence for b in blocks)


def dev(strategies: Sequence[Strategy], translate_n: int = 0) -> None:
    ws, ds, sources = _dev_workspace()
    cases = [c for c in ds.cases if c.evidence and str(ds.paper_path(c)) in sources]

    def search(q: str, k: int, f: SearchFilters):  # type: ignore[no-untyped-def]
        return ws.searcher.search(q, k=k, filters=f)

    print(f"\n## footnote-dev ({len(cases)} cases with gold evidence; shown = top {SHOWN})\n")
    print(
        "| strategy | fit hit@4 | test hit@4 | test hit@8 | test zh hit@4 | test cross/cf hit@4 | ms/q |"
    )
    print("|---|---|---|---|---|---|---|")
    runs: list[tuple[Strategy, Translate | None, list[Case]]] = [
        (s, None, cases) for s in strategies
    ]
    calls = {"n": 0, "tokens_in": 0, "seconds": 0.0}
    if translate_n:
        mixed = [c for c in cases if _paper_lang(ws, sources[str(ds.paper_path(c))]) != c.lang]
        mixed = mixed[:translate_n]
        translate = _model_translator(ws, calls)
        runs = [(s, None, mixed) for s in (TODAY, replace(DEFAULT, bilingual=False))]
        runs.append((DEFAULT, translate, mixed))
        print(f"(bilingual run: {len(mixed)} cases whose question and paper languages differ)")
    for s, tr, chosen in runs:
        r = Retriever(
            search,
            ws.store,
            evidence_k=SHOWN,
            k=8,
            cosine_band=ws.cosine_band(),
            strategy=s,
            translate=tr,
        )
        agg: dict[str, list[float]] = {}
        t0 = time.perf_counter()
        for c in chosen:
            sid = sources[str(ds.paper_path(c))]
            got = r(c.question, understand_by_rules(c.question), SearchFilters(source_ids=(sid,)))
            half = dev_half(c.id)
            keys = [half, f"{half}@8"]
            if c.lang == "zh":
                keys.append(f"{half}-zh")
            if c.type in ("cross_section", "counterfactual"):
                keys.append(f"{half}-cross")
            for key in keys:
                n = 8 if key.endswith("@8") else SHOWN
                a = agg.setdefault(key, [0.0, 0.0])
                a[0] += dev_hit(c, got.evidence[:n])
                a[1] += 1
        ms = (time.perf_counter() - t0) * 1000 / max(1, len(chosen))

        def cell(key: str, agg: dict[str, list[float]] = agg) -> str:
            a = agg.get(key)
            return f"{a[0] / a[1]:.3f} ({int(a[0])}/{int(a[1])})" if a else "–"

        label = s.name + (" + translate" if tr else "")
        print(
            f"| {label} | {cell('fit')} | {cell('test')} | {cell('test@8')} | {cell('test-zh')} | "
            f"{cell('test-cross')} | {ms:.0f} |"
        )
    if translate_n:
        n = max(1, calls["n"])
        print(
            f"\ntranslation calls: {calls['n']}, prompt tokens/call {calls['tokens_in'] / n:.0f}, "
            f"s/call {calls['seconds'] / n:.1f}"
        )
    ws.close()


def tables(strategy: Strategy = DEFAULT) -> None:
    """Table cells by code on the dev set: every case that names a table or asks a value."""
    from footnote.eval.metrics import answer_matches
    from footnote.pipelines.ask.tables import resolve_in_tables

    ws, ds, sources = _dev_workspace()

    def search(q: str, k: int, f: SearchFilters):  # type: ignore[no-untyped-def]
        return ws.searcher.search(q, k=k, filters=f)

    r = Retriever(search, ws.store, evidence_k=SHOWN, k=8, cosine_band=ws.cosine_band(),
                  strategy=strategy)  # fmt: skip
    print("\n## Table cells by code (dev set, every case the rules call table_value)\n")
    print("| case | half | type | resolved cell | value | right? |")
    print("|---|---|---|---|---|---|")
    tally = {"cases": 0, "resolved": 0, "right": 0, "wrong": 0}
    for c in ds.cases:
        und = understand_by_rules(c.question)
        if not (und.table_refs or und.type == "table_value"):
            continue
        sid = sources.get(str(ds.paper_path(c)))
        if sid is None:
            print(f"| {c.id} | {dev_half(c.id)} | {c.type} | paper not ingested | | |")
            tally["cases"] += 1
            continue
        got = r(c.question, und, SearchFilters(source_ids=(sid,)))
        cell = resolve_in_tables(
            c.question,
            [e.block for e in got.evidence[: 2 * SHOWN] if e.block.table],
            und.table_refs,
        )
        tally["cases"] += 1
        if cell is None:
            print(f"| {c.id} | {dev_half(c.id)} | {c.type} | – (composer) | | |")
            continue
        tally["resolved"] += 1
        ok = (not c.unanswerable) and answer_matches(cell.value, c.accept)
        tally["right" if ok else "wrong"] += 1
        print(
            f"| {c.id} | {dev_half(c.id)} | {c.type} | {cell.row_label[:30]} × {cell.col_label[:30]} | {cell.value} | {ok} |"
        )
    print(f"\n{tally}")
    ws.close()


def _paper_lang(ws, source_id: str) -> str:  # type: ignore[no-untyped-def]
    from footnote.textnorm import text_lang

    sample = " ".join(
        b.text for _, b in zip(range(40), ws.store.iter_blocks(source_id), strict=False)
    )
    return "zh" if text_lang(sample) == "zh" else "en"


def _model_translator(ws, calls: dict[str, float]) -> Translate:  # type: ignore[no-untyped-def]
    from footnote.pipelines.ask.narrow import translate_question

    model = ws.models.chat("compose")

    def translate(question: str, lang: str) -> str:
        t0 = time.perf_counter()
        text, completion = translate_question(model, question, lang)
        calls["n"] += 1
        calls["tokens_in"] += completion.tokens_in
        calls["seconds"] += time.perf_counter() - t0
        return text

    return translate


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", choices=("qasper", "dev", "tables"))
    p.add_argument("--translate", type=int, default=0)
    a = p.parse_args(argv)
    run: dict[str, Callable[[], None]] = {
        "qasper": lambda: qasper(STRATEGIES),
        "dev": lambda: dev(STRATEGIES, a.translate),
        "tables": tables,
    }
    for name, fn in run.items():
        if a.only in (None, name):
            fn()


if __name__ == "__main__":
    main()
