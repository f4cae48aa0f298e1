"""Suite 5, concurrency: files are ingested (by upload and directly) while 20 threads search
with different users' ACL groups and 10 sessions chat over a live loopback server (real store,
FTS5, wordllama vectors, extractive ask). Bounded in count and time. Counted: searches, turns
and ingests (tried), those whose every row was allowed and unique (blocked: restricted rows
kept out), and wrong rows, duplicates, failed operations and threads still running at the
deadline (lost: must be 0)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from suite_support import LiveServer, tally

from footnote.access import personal_group, readable_by
from footnote.index import SearchFilters
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # CI runs them (./scripts/test)
SEARCHERS, SESSIONS, TURNS, SEARCHES = 20, 10, 3, 25
DEADLINE_S = 150
GROUPS = ("team-a", "team-b")


def _paper(i: int, group: str) -> str:
    return (f"# Study {i} of {group}\n\n## Results\n\nIn study {i} the glacier retreat measured "
            f"{10 + i} metres per year for {group}.\n\n## Method\n\nStudy {i} used drones.\n")  # fmt: skip


def test_ingest_while_20_threads_search_and_10_sessions_chat(
    fast_ws: Workspace, tmp_path: Path
) -> None:
    t = tally("concurrency")
    ws = fast_ws
    base = tmp_path / "base"
    base.mkdir()
    for i, group in enumerate(GROUPS * 2):
        (base / f"b{i}.md").write_text(_paper(i, group))
        assert not ws.ingest([base / f"b{i}.md"], acl_groups=(group,)).failed
    problems: list[str] = []
    lock = threading.Lock()

    def bad(what: str) -> None:
        with lock:
            problems.append(what)
        t.add(tried=1, lost=1)

    with LiveServer(ws, ServerDeps(use_models=False)) as srv:
        auth = srv.app.state.footnote.auth
        keys = {f"u{i}": auth.add_key(f"u{i}", (GROUPS[i % 2],)) for i in range(SESSIONS)}
        ingesting = threading.Event()
        ingesting.set()

        def ingest() -> None:
            try:
                for i in range(8):
                    group = GROUPS[i % 2]
                    path = tmp_path / f"new{i}.md"
                    path.write_text(_paper(100 + i, group))
                    if i % 2:  # as a user's upload, through the API
                        key = keys[f"u{i % SESSIONS if (i % SESSIONS) % 2 == i % 2 else 1}"]
                        r = httpx.post(f"{srv.url}/v1/sources", headers={"X-API-Key": key},
                                       files={"file": (path.name, path.read_bytes())}, timeout=30)  # fmt: skip
                        ok = r.status_code == 202
                    else:  # as the operator, directly
                        ok = not ws.ingest([path], acl_groups=(group,)).failed
                    t.add(tried=1, blocked=int(ok), lost=int(not ok))
                    if not ok:
                        problems.append(f"ingest {path.name} failed")
            finally:
                ingesting.clear()

        def search(n: int) -> None:
            groups = (GROUPS[n % 2], personal_group(f"s{n}"))
            for j in range(SEARCHES):
                f = SearchFilters(user_groups=groups)
                hits = ws.searcher.search(f"glacier retreat study {j % 12}", k=8, filters=f)
                ids = [h.block.id for h in hits]
                wrong = [h.block.id for h in hits if not _readable(ws, h.block.source_id, groups)]
                if wrong or len(ids) != len(set(ids)):
                    bad(f"search {n}/{j}: wrong {wrong} dup {len(ids) - len(set(ids))}")
                else:
                    t.add(tried=1, blocked=1)
                if not ingesting.is_set() and j >= 5:
                    break

        def chat(n: int) -> None:
            user = f"u{n}"
            groups = (GROUPS[n % 2], personal_group(user))
            with httpx.Client(base_url=srv.url, headers={"X-API-Key": keys[user]},
                              timeout=60) as c:  # fmt: skip
                sid = c.post("/v1/sessions", json={}).json()["id"]
                for turn in range(TURNS):
                    r = c.post(f"/v1/sessions/{sid}/messages",
                               json={"content": f"How fast did the glacier retreat in study {turn}?"})  # fmt: skip
                    if r.status_code != 202:
                        bad(f"chat {user} turn {turn}: {r.status_code} {r.text[:200]}")
                        continue
                    run = r.json()["run_id"]
                    final = _follow(c, run)
                    cited = [c_["id"] for s in (final or {}).get("sentences", [])
                             for c_ in s.get("citations", [])]  # fmt: skip
                    blocks = ws.store.get_blocks([i.split("#")[0] for i in cited])
                    wrong = [b for b in blocks.values() if not _readable(ws, b.source_id, groups)]
                    if final is None or wrong:
                        bad(f"chat {user} turn {turn}: final={final is not None} wrong={wrong}")
                    else:
                        t.add(tried=1, blocked=1)
                msgs = c.get(f"/v1/sessions/{sid}/messages").json()
                seqs = [m["seq"] for m in msgs]
                if seqs != list(range(1, 2 * TURNS + 1)) or any(m["status"] != "completed"
                                                                 for m in msgs):  # fmt: skip
                    bad(f"chat {user}: messages {[(m['seq'], m['status']) for m in msgs]}")

        threads = [threading.Thread(target=ingest, name="ingest")]
        threads += [threading.Thread(target=search, args=(n,), name=f"search{n}")
                    for n in range(SEARCHERS)]  # fmt: skip
        threads += [threading.Thread(target=chat, args=(n,), name=f"chat{n}")
                    for n in range(SESSIONS)]  # fmt: skip
        start = time.monotonic()
        for th in threads:
            th.start()
        for th in threads:
            th.join(max(1.0, DEADLINE_S - (time.monotonic() - start)))
        stuck = [th.name for th in threads if th.is_alive()]
        for name in stuck:
            bad(f"deadlock or stall: {name} still running after {DEADLINE_S}s")
        _wait_uploads(srv.url, keys)
    dupes = _duplicates(ws)
    for d in dupes:
        bad(d)
    assert not problems, problems[:10]


def _readable(ws: Workspace, source_id: str, groups: tuple[str, ...]) -> bool:
    record = ws.store.get_source(source_id)
    return record is not None and readable_by(record.source, groups)


def _follow(c: httpx.Client, run_id: str) -> dict[str, Any] | None:
    final = None
    with c.stream("GET", f"/v1/runs/{run_id}/events") as resp:
        event = ""
        for line in resp.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "final":
                final = json.loads(line[6:])["answer"]
    return final


def _wait_uploads(url: str, keys: dict[str, str]) -> None:
    deadline = time.monotonic() + 60
    for key in keys.values():
        while time.monotonic() < deadline:
            got = httpx.get(f"{url}/v1/sources", headers={"X-API-Key": key}).json()
            if all(s["status"] != "processing" for s in got):
                break
            time.sleep(0.1)


def _duplicates(ws: Workspace) -> list[str]:
    conn = ws.store.conn
    out = []
    with ws.store.lock:
        for sql, what in (
            ("SELECT sha256, owner, acl_groups, labels, count(*) FROM sources "
             "GROUP BY 1, 2, 3, 4 HAVING count(*) > 1", "source stored twice"),
            ("SELECT block_id, count(*) FROM index_blocks GROUP BY 1 HAVING count(*) > 1",
             "block indexed twice"),
        ):  # fmt: skip
            out += [f"{what}: {tuple(r)}" for r in conn.execute(sql).fetchall()]
    keys = ws.searcher.vectors.keys
    if len(keys) != len(set(keys.tolist())):
        out.append("vector rows duplicated in memory")
    return out
