"""Evidence retrieval quality on QASPER (English) and a heading-derived Chinese set.

English: QASPER papers with full text *and* gold evidence paragraphs:
- the 10 train papers in `qasper_train_sample10_hf_format.jsonl` (paragraph JSON), and
- the LEval papers joined with `qasper_dev_extractive_questions.json` by evidence text (LEval
  gives full text as lines; a short line without final punctuation is taken as a heading).
One paragraph = one block (section_path = section name). A question's gold set is the union of
annotators' evidence paragraphs that map to a block by exact (whitespace-normalised) text;
"FLOAT SELECTED" table/figure evidence cannot map and is dropped; questions with no mapped
evidence are skipped. Search is restricted to the question's paper (QASPER setting).

Chinese: no Chinese questions exist in the shared data, and nothing is translated. Instead the
Chinese sources with ground-truth text (sci-pdfs/groundtruth: elegantpaper-cn.tex, the
ucasthesis .tex chapters, the MinerU research-report markdown) are split into paragraphs per
(sub)section; each section heading becomes a question whose gold set is that section's
paragraphs. Headings are *not* indexed (blocks carry no section path), so the task is "find
the section about <heading>". Used to compare jieba-segmented FTS with the trigram tokenizer.

Usage: python bench/retrieval_quality.py [--max-postings N]   (e5 vectors cached in
bench/out/e5_cache.npz; N: the lexical term-pruning budget, default the library's; the
corpus has ~1.7k blocks, so N≈35 prunes as hard as the default 20k does at 1M blocks, and the
QASPER searches are source-filtered, which multiplies N by SOURCE_FILTER_FACTOR)
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import CachedE5
from footnote.config import RetrievalSettings
from footnote.index import Indexer, Searcher, SearchFilters
from footnote.index.lexical import SqliteLexical
from footnote.index.lexical_text import query_terms
from footnote.models.roles import RoleEmbedder
from footnote.store.sqlite import SqliteStore
from footnote.textnorm import CJK_RUN_RE
from footnote.types import Block, Document, Source, make_block_id, sha256_hex

DATA = Path("/work/shared/data")
QASPER = DATA / "qasper-partial"
ZH = DATA / "sci-pdfs/groundtruth"
Paper = tuple[str, list[tuple[str, str]], list[tuple[str, set[str]]]]  # id, paras, questions


def norm(t: str) -> str:
    return " ".join(t.split())


def qasper_train() -> list[Paper]:
    txt = (QASPER / "qasper_train_sample10_hf_format.jsonl").read_text()
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(txt) and txt[i].isspace():
            i += 1
        if i >= len(txt):
            break
        o, i = dec.raw_decode(txt, i)
        ft = o["full_text"]
        paras = [
            (s, p)
            for s, ps in zip(ft["section_name"], ft["paragraphs"], strict=True)
            for p in ps
            if p.strip()
        ]
        qs = []
        for q, ans in zip(o["qas"]["question"], o["qas"]["answers"], strict=True):
            ev = {norm(e) for a in ans["answer"] for e in a["evidence"]}
            qs.append((q, ev))
        out.append((o["id"], paras, qs))
    return out


def leval_dev() -> list[Paper]:
    dev = json.loads((QASPER / "qasper_dev_extractive_questions.json").read_text())
    out = []
    for n, line in enumerate((QASPER / "leval_scientific_qa.jsonl").read_text().splitlines()):
        inp = json.loads(line)["input"]
        section, paras = "", []
        for ln in (x.strip() for x in inp.split("\n")):
            if not ln:
                continue
            if len(ln) < 100 and len(ln.split()) <= 12 and not re.search(r"[.?!:;)\"]$", ln):
                section = ln
            else:
                paras.append((section, ln))
        texts = {norm(p) for _, p in paras}
        qs = [
            (v["text"], {norm(e) for e in v["evidence"]})
            for v in dev.values()
            if any(norm(e) in texts for e in v["evidence"])
        ]
        if qs:
            out.append((f"leval{n}", paras, qs))
    return out


def zh_sections() -> list[Paper]:
    def tex(path: Path) -> list[tuple[str, str]]:
        out, head = [], ""
        for chunk in re.split(r"\n\s*\n", path.read_text()):
            for part in re.split(r"(\\(?:sub)*section\*?\{[^\n]*\}|\\chapter[^\n]*)", chunk):
                m = re.match(r"\\(?:(?:sub)*section\*?|chapter)(?:\[[^]]*\])?\{(.*)\}", part)
                if m:
                    raw = re.sub(r"\\label\{[^}]*\}|%.*", "", m.group(1))
                    head = norm(re.sub(r"\\[a-zA-Z]+|[{}$]", " ", raw)).split("[")[0].strip()
                    continue
                text = re.sub(r"(?m)%.*$", "", part)
                text = re.sub(r"\\[a-zA-Z]+\*?(\[[^]]*\])?", " ", text)
                text = norm(re.sub(r"[{}]", "", text))
                if head and len(CJK_RUN_RE.findall(text)) and len(text) > 15:
                    out.append((head, text))
        return out

    def md(path: Path) -> list[tuple[str, str]]:
        out, head = [], ""
        for chunk in re.split(r"\n\s*\n", path.read_text()):
            chunk = chunk.strip()
            if chunk.startswith("#"):
                head = chunk.lstrip("# ").strip()
            elif head and CJK_RUN_RE.search(chunk) and len(chunk) > 15:
                out.append((head, norm(chunk)))
        return out

    paras = md(ZH / "mineru_research_report_1f978cd81fb7260c8f7644039ec2c054.gt.md")
    paras += tex(ZH / "elegantpaper-cn.source.tex")
    for f in sorted((ZH / "ucasthesis-tex").glob("*.tex")):
        paras += tex(f)
    heads: dict[str, set[str]] = {}
    for h, p in paras:
        heads.setdefault(h, set()).add(p)
    qs = [(h, ps) for h, ps in heads.items() if CJK_RUN_RE.search(h)]
    return [("zh", [("", p) for _, p in paras], qs)]


def build(store: SqliteStore, papers: list[Paper]) -> dict[str, str]:
    ids = {}
    for pid, paras, _ in papers:
        sha = sha256_hex(pid.encode())
        src = Source(id=sha[:12], kind="text", title=pid, uri=f"bench://{pid}", sha256=sha)
        blocks = tuple(
            Block(
                make_block_id(sha, 1, i, t),
                src.id,
                "paragraph",
                t,
                1,
                section_path=(s,) if s else (),
                order=i,
            )
            for i, (s, t) in enumerate(paras)
        )
        store.save_document(Document(src, blocks))
        ids[pid] = src.id
    return ids


def evaluate(searcher, papers, ids, qsel, methods, k=10, mmr=True):  # type: ignore[no-untyped-def]
    r5, r10, mrr, n = 0.0, 0.0, 0.0, 0
    for pi, (pid, _, qs) in enumerate(papers):
        for qi, (q, gold_text) in enumerate(qs):
            if not qsel(pi, qi):
                continue
            hits = searcher.search(
                q,
                k=k,
                methods=methods,
                expand=False,
                mmr_enabled=mmr,
                filters=SearchFilters(source_ids=(ids[pid],)),
            )
            texts = [norm(h.block.text) for h in hits]
            gold = {t for t in gold_text if t in set(_texts(searcher, ids[pid]))}
            if not gold:
                continue
            n += 1
            r5 += len(gold & set(texts[:5])) / len(gold)
            r10 += len(gold & set(texts[:10])) / len(gold)
            mrr += next((1 / (i + 1) for i, t in enumerate(texts) if t in gold), 0.0)
    return {
        "n": n,
        "recall@5": r5 / max(n, 1),
        "recall@10": r10 / max(n, 1),
        "mrr": mrr / max(n, 1),
    }


_TEXTS: dict[str, set[str]] = {}


def _texts(searcher, sid):  # type: ignore[no-untyped-def]
    if sid not in _TEXTS:
        _TEXTS[sid] = {norm(b.text) for b in searcher.store.iter_blocks(sid)}
    return _TEXTS[sid]


def trigram_eval(papers, k=10):  # type: ignore[no-untyped-def]
    """The same Chinese task on an FTS5 `trigram` table: the query is an OR of its 3-grams."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body, tokenize='trigram')")
    _, paras, qs = papers[0]
    conn.executemany(
        "INSERT INTO t(rowid, body) VALUES (?,?)", [(i, p) for i, (_, p) in enumerate(paras)]
    )
    r5 = r10 = mrr = 0.0
    for q, gold in qs:
        grams = {q[i : i + 3] for i in range(len(q) - 2) if q[i : i + 3].strip()}
        latin, _ = query_terms(q)
        terms = [g for g in grams if len(g) == 3] + [w for w in latin if len(w) >= 3]
        rows = (
            conn.execute(
                "SELECT body FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ?",
                (" OR ".join('"' + g.replace('"', '""') + '"' for g in terms) or '""', k),
            ).fetchall()
            if terms
            else []
        )
        texts = [r[0] for r in rows]
        r5 += len(gold & set(texts[:5])) / len(gold)
        r10 += len(gold & set(texts[:10])) / len(gold)
        mrr += next((1 / (i + 1) for i, t in enumerate(texts) if t in gold), 0.0)
    n = len(qs)
    return {"n": n, "recall@5": r5 / n, "recall@10": r10 / n, "mrr": mrr / n}


def fmt(name: str, m: dict[str, float]) -> str:
    return f"| {name} | {m['n']} | {m['recall@5']:.3f} | {m['recall@10']:.3f} | {m['mrr']:.3f} |"


def main() -> None:
    e5 = CachedE5()
    en = qasper_train() + leval_dev()
    zh = zh_sections()
    tmp = Path(tempfile.mkdtemp())
    store = SqliteStore(tmp / "q.db")
    ids = build(store, en + zh)
    t0 = time.perf_counter()
    idx = Indexer(
        store, RoleEmbedder(e5, url=e5.name, external=False), RetrievalSettings(), tmp / "idx"
    )
    for sid in ids.values():
        idx.index_source(sid)
    e5.save()
    print(
        f"indexed {sum(len(p[1]) for p in en + zh)} blocks in {time.perf_counter() - t0:.1f} s "
        f"({e5.embedded} newly embedded in {e5.seconds:.1f} s)"
    )
    head = "| method | questions | recall@5 | recall@10 | MRR |\n|---|---|---|---|---|"

    budget = (
        int(sys.argv[sys.argv.index("--max-postings") + 1])
        if "--max-postings" in sys.argv
        else None
    )
    lex = SqliteLexical(store) if budget is None else SqliteLexical(store, max_postings=budget)
    if budget is not None:
        print(f"\nlexical term budget (summed document frequency): {budget}")

    def searcher(**kw):  # type: ignore[no-untyped-def]
        return Searcher(
            store,
            RoleEmbedder(e5, url=e5.name, external=False),
            RetrievalSettings(**kw),
            tmp / "idx",
            lexical=lex,
        )

    allq = lambda pi, qi: True  # noqa: E731
    print(
        "\n## English QASPER, all questions (default settings: RRF, vector weight 2, MMR on)\n"
        + head
    )
    s = searcher()
    for name, m in [
        ("lexical (FTS5 bm25)", ("lexical",)),
        ("vector (e5)", ("vector",)),
        ("hybrid", ("lexical", "vector")),
    ]:
        print(fmt(name, evaluate(s, en, ids, allq, m)))
    print(fmt("hybrid, MMR off", evaluate(s, en, ids, allq, ("lexical", "vector"), mmr=False)))
    # the in-memory bm25 index (used above `lexical_memory_threshold` blocks) on the same data
    mem = SqliteLexical(store, memory_threshold=0, index_dir=tmp / "idx")
    s_mem = Searcher(
        store,
        RoleEmbedder(e5, url=e5.name, external=False),
        RetrievalSettings(),
        tmp / "idx",
        lexical=mem,
    )
    print(fmt("lexical, in-memory bm25", evaluate(s_mem, en, ids, allq, ("lexical",))))
    print(fmt("hybrid, in-memory bm25", evaluate(s_mem, en, ids, allq, ("lexical", "vector"))))
    # tune on one half (even question positions), report on the other (odd)
    grid = [
        dict(fusion=f, vector_weight=w) for f in ("rrf", "linear") for w in (1.0, 1.5, 2.0, 3.0)
    ]
    halves = [("even", lambda pi, qi: qi % 2 == 0), ("odd", lambda pi, qi: qi % 2 == 1)]
    print("\n## Fusion grid (hybrid; tune half = even questions, test half = odd)\n")
    print("| fusion | vector_weight | tune R@5 | tune MRR | test R@5 | test R@10 | test MRR |")
    print("|---|---|---|---|---|---|---|")
    results = []
    for g in grid:
        s = searcher(**g)
        tune = evaluate(s, en, ids, halves[0][1], ("lexical", "vector"))
        test = evaluate(s, en, ids, halves[1][1], ("lexical", "vector"))
        results.append((g, tune, test))
        print(
            f"| {g['fusion']} | {g['vector_weight']} | {tune['recall@5']:.3f} | "
            f"{tune['mrr']:.3f} | {test['recall@5']:.3f} | {test['recall@10']:.3f} | "
            f"{test['mrr']:.3f} |"
        )
    best = max(results, key=lambda r: r[1]["recall@5"] + r[1]["mrr"])
    print(f"\nchosen on the tune half: {best[0]}")
    s = searcher()
    print("\n## Test half (odd questions)\n" + head)
    for name, m in [("lexical", ("lexical",)), ("vector", ("vector",))]:
        print(fmt(name, evaluate(s, en, ids, halves[1][1], m)))
    print(fmt(f"hybrid {best[0]}", best[2]))

    print("\n## Chinese heading→section set\n" + head)
    s = searcher()
    print(fmt("FTS5 jieba (search mode) + unicode61", evaluate(s, zh, ids, allq, ("lexical",))))
    print(fmt("FTS5 trigram (query = OR of 3-grams)", trigram_eval(zh)))
    print(fmt("vector (e5)", evaluate(s, zh, ids, allq, ("vector",))))
    print(fmt("hybrid", evaluate(s, zh, ids, allq, ("lexical", "vector"))))
    e5.save()
    store.close()


if __name__ == "__main__":
    main()
