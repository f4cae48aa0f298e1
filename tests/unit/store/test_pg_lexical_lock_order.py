"""Two transactions indexing blocks on PostgreSQL at once must not deadlock (found by the job
queue's two-worker ingest benchmark: "indexing stopped: deadlock detected"). Each indexed
statement's trigger upserts the BM25 term counts and then the single totals row; a
transaction that indexes in several statements held the totals row while the other held a
term it needed next. The totals row is now locked first, so index writers queue on it."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import psycopg
import pytest

from footnote.store.postgres import PgDatabase

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # tests/pgtest.py
from pgtest import fresh_database

SOURCE = (
    "INSERT INTO sources (id, kind, title, uri, sha256, pages, lang, version, source_type, "
    "labels, acl_groups, warnings, sections) VALUES (%s, 'md', 't', 'u', 'h', 1, 'en', 1, "
    "'unknown', '[]', '[]', '[]', '[]')"
)
BLOCK = (
    "INSERT INTO blocks (id, source_id, kind, text, page, section_path, ord, lang, data) "
    "VALUES (%s, %s, 'paragraph', %s, 1, '[]', 0, 'en', '{}')"
)
INDEX = (
    "INSERT INTO index_blocks (block_id, body, tsv, len) "
    "VALUES (%s, %s, to_tsvector('simple', %s), 1)"
)


def test_two_multi_statement_index_writes_do_not_deadlock() -> None:
    url = fresh_database()
    PgDatabase(url, pool_size=1).pool.close()  # migrated
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute(SOURCE, ("s",))
        for b in ("x1", "x2", "y1"):
            setup.execute(BLOCK, (b, "s", b))
    one = psycopg.connect(url)
    two = psycopg.connect(url)
    one.execute("SET lock_timeout = '20s'")
    two.execute("SET lock_timeout = '20s'")
    errors: list[BaseException] = []
    one.execute(INDEX, ("x1", "alpha", "alpha"))  # txn 1: its first statement

    def second() -> None:
        try:
            two.execute(INDEX, ("y1", "beta", "beta"))  # txn 2 wants the totals row (or beta)
            two.commit()
        except BaseException as exc:
            errors.append(exc)

    t = threading.Thread(target=second)
    t.start()
    t.join(1.0)  # txn 2 is now waiting on txn 1
    try:
        one.execute(INDEX, ("x2", "beta", "beta"))  # txn 1 needs beta next
        one.commit()
    except psycopg.errors.DeadlockDetected as exc:
        errors.append(exc)
        one.rollback()
    t.join(30)
    one.close()
    two.close()
    assert not errors, errors
    with psycopg.connect(url) as check:
        df = dict(check.execute("SELECT term, df FROM lexical_terms").fetchall())
        rows = check.execute("SELECT rows FROM lexical_totals").fetchone()
    assert df == {"alpha": 1, "beta": 2} and rows == (3,)


if __name__ == "__main__":
    pytest.main([__file__])
