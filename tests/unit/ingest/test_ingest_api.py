"""Public API: discover, limits, errors, ids, settings carried onto the Source."""

from __future__ import annotations

from pathlib import Path

import pytest

from footnote.config import IngestSettings
from footnote.errors import IngestError, UnsupportedInput
from footnote.ingest import SUPPORTED_SUFFIXES, discover, parse_file
from footnote.types import sha256_hex

PARA = "A paragraph long enough to stay a block of its own in the document. "


def test_discover_expands_folders_and_keeps_explicit_files(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.md").write_text("# x")
    (tmp_path / "a" / "y.PDF").write_bytes(b"%PDF-")
    (tmp_path / "a" / "z.odt").write_bytes(b"")
    (tmp_path / "a" / ".hidden").mkdir()
    (tmp_path / "a" / ".hidden" / "h.md").write_text("# h")
    odd = tmp_path / "odd.xyz"
    odd.write_text("x")
    found = discover([tmp_path / "a", odd])
    assert found == sorted([tmp_path / "a" / "x.md", tmp_path / "a" / "y.PDF", odd])
    assert ".pdf" in SUPPORTED_SUFFIXES and ".md" in SUPPORTED_SUFFIXES


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    odd = tmp_path / "odd.xyz"
    odd.write_text("x")
    with pytest.raises(UnsupportedInput, match="unsupported file type"):
        parse_file(odd, IngestSettings())
    with pytest.raises(IngestError, match="no such file"):
        parse_file(tmp_path / "missing.md", IngestSettings())


def test_file_size_limit(tmp_path: Path) -> None:
    p = tmp_path / "big.txt"
    p.write_text("x" * 300_000)
    with pytest.raises(UnsupportedInput, match="max_file_mb"):
        parse_file(p, IngestSettings(max_file_mb=0.1))


def test_source_fields_and_stable_ids(tmp_path: Path) -> None:
    p = tmp_path / "doc.md"
    p.write_text(f"# Title\n\n{PARA}\n\n## Part\n\n{PARA}again\n\n{PARA}", encoding="utf-8")
    settings = IngestSettings(default_labels=("internal",), default_acl_groups=("team",))
    a, b = parse_file(p, settings), parse_file(p, settings)
    sha = sha256_hex(p.read_bytes())
    assert a.source.id == sha[:12] and a.source.sha256 == sha
    assert a.source.uri == str(p.resolve()) and a.source.labels == ("internal",)
    assert a.source.acl_groups == ("team",)
    assert [x.id for x in a.blocks] == [x.id for x in b.blocks]
    assert [x.order for x in a.blocks] == list(range(len(a.blocks)))
    assert len({x.id for x in a.blocks}) == len(a.blocks)
    assert all(x.id.startswith(sha[:8]) for x in a.blocks)


def test_duplicates_merged_short_fragments_merged_long_split(tmp_path: Path) -> None:
    long = " ".join(f"Sentence number {i} is here." for i in range(80))
    p = tmp_path / "d.txt"
    p.write_text(f"{PARA}\n\n{PARA}\n\nTiny bit.\n\n{long}\n", encoding="utf-8")
    doc = parse_file(p, IngestSettings(max_block_chars=300, min_block_chars=40))
    texts = [b.text for b in doc.blocks]
    assert sum(1 for t in texts if t.startswith("A paragraph long")) == 1
    assert not any(t == "Tiny bit." for t in texts)
    assert all(len(t) <= 300 for t in texts)
    assert all(t.endswith(".") for t in texts)


def test_workers_setting_parses_a_folder_in_worker_processes(tmp_path: Path) -> None:
    import os

    from footnote.ingest.pool import parse_many

    paths = []
    for i in range(3):
        p = tmp_path / f"d{i}.md"
        p.write_text(f"# Doc {i}\n\n{PARA}{i}\n", encoding="utf-8")
        paths.append(p)
    bad = tmp_path / "bad.pdf"
    bad.write_text("not a pdf")
    paths.append(bad)
    here = list(parse_many(paths, IngestSettings(workers=1)))
    assert {r.pid for r in here} == {os.getpid()}
    pooled = list(parse_many(paths, IngestSettings(workers=2)))
    assert os.getpid() not in {r.pid for r in pooled}
    assert [r.path for r in pooled] == paths  # results in the order given
    assert [r.document.source.title for r in pooled[:3] if r.document] == [
        "Doc 0",
        "Doc 1",
        "Doc 2",
    ]
    assert pooled[3].document is None and pooled[3].error is not None
    assert [b.id for b in pooled[0].document.blocks] == [b.id for b in here[0].document.blocks]
