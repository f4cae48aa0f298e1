from dataclasses import replace
from pathlib import Path

from footnote.store.sqlite import SqliteStore
from footnote.store.sqlite.migrations import MIGRATIONS
from footnote.types import Block, Document, Section, Source, Table, make_block_id, sha256_hex


def make_doc(content: bytes, uri: str = "/papers/a.pdf") -> Document:
    sha = sha256_hex(content)
    sid = sha[:12]
    texts = ["Intro", "First paragraph.", "Second paragraph.", "T"]
    blocks = []
    for i, text in enumerate(texts):
        kind = "heading" if i == 0 else ("table" if i == 3 else "paragraph")
        table = (
            Table(header=(("a", "b"),), rows=(("1", "2"),), caption="Table 1") if i == 3 else None
        )
        blocks.append(
            Block(
                make_block_id(sha, 1, i, text),
                sid,
                kind,
                text,
                1,
                order=i,
                section_path=("Intro",),
                bbox=(1.0, 2.0, 3.0, 4.0),
                table=table,
            )
        )
    source = Source(sid, "pdf", "A paper", uri, sha)
    sections = (Section("Intro", 1, block_ids=tuple(b.id for b in blocks)),)
    return Document(source, tuple(blocks), sections=sections)


def test_round_trip_and_idempotent_save(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "f.db")
    doc = make_doc(b"one")
    assert store.save_document(doc) is True
    assert store.save_document(doc) is False
    back = store.get_document(doc.source.id)
    assert back is not None
    assert back.blocks == doc.blocks
    assert back.sections == doc.sections
    assert back.blocks[3].table is not None and back.blocks[3].table.cell(1, 1) == "2"


def test_metadata_parser_ocr_and_latex_round_trip(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "f.db")
    doc = make_doc(b"meta")
    source = replace(
        doc.source,
        authors=("Ada Lovelace", "Alan Turing"),
        doi="10.1000/xyz123",
        arxiv_id="2101.00001",
        published_at="2021-01-04",
        parser="tesseract 5.3.0 eng 200dpi",
    )
    blocks = (
        replace(doc.blocks[0], ocr_confidence=0.91),
        replace(doc.blocks[1], kind="formula", latex="E = mc^{2}"),
        *doc.blocks[2:],
    )
    store.save_document(replace(doc, source=source, blocks=blocks))
    back = store.get_document(source.id)
    assert back is not None
    assert back.source == replace(source, version=1)
    assert back.blocks[0].ocr_confidence == 0.91 and back.blocks[2].ocr_confidence is None
    assert back.blocks[1].latex == "E = mc^{2}"


def test_new_version_supersedes_but_old_stays_addressable(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "f.db")
    old, new = make_doc(b"v1"), make_doc(b"v2")
    store.save_document(old)
    store.save_document(new)
    assert [r.source.id for r in store.list_sources()] == [new.source.id]
    assert len(store.list_sources(include_superseded=True)) == 2
    rec = store.get_source(old.source.id)
    assert rec is not None and rec.superseded_by == new.source.id
    latest = store.find_source_by_uri("/papers/a.pdf")
    assert latest is not None and latest.source.version == 2
    assert store.get_block(old.blocks[1].id) is not None


def test_neighbours_and_delete_cascade(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "f.db")
    doc = make_doc(b"x")
    store.save_document(doc)
    assert [b.id for b in store.neighbours(doc.blocks[1].id)] == [b.id for b in doc.blocks[:3]]
    assert store.delete_source(doc.source.id)
    assert store.get_block(doc.blocks[1].id) is None
    assert not store.delete_source(doc.source.id)


def test_migrations_are_recorded_once(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "f.db").close()
    store = SqliteStore(tmp_path / "f.db")
    names = [r[0] for r in store.conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(n for n, _ in MIGRATIONS)


def test_migrations_are_numbered_in_the_order_they_apply() -> None:
    numbers = [int(name.split("_", 1)[0]) for name, _ in MIGRATIONS]
    assert numbers == list(range(1, len(MIGRATIONS) + 1))


def test_a_workspace_migrated_under_the_old_names_is_not_migrated_again(tmp_path: Path) -> None:
    import sqlite3

    from footnote.store.sqlite.migrations import RENAMED, apply_migrations

    path = tmp_path / "old.db"
    SqliteStore(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    for old, new in RENAMED.items():  # what a workspace made before the renumbering holds
        conn.execute("UPDATE _migrations SET name = ? WHERE name = ?", (old, new))
    assert apply_migrations(conn) == []
    names = [r[0] for r in conn.execute("SELECT name FROM _migrations ORDER BY name")]
    assert names == sorted(name for name, _ in MIGRATIONS)
    conn.close()
