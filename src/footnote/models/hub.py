"""`footnote models pull`: fetch a GGUF file from a Hugging Face-style hub.

Uses `huggingface_hub` against `endpoint` (default: `HF_ENDPOINT` or the public hub), lists
the repository's `.gguf` files, downloads the chosen one into `<model cache>/hub/<repo>/`
and checks it against the sha256 the hub states for it (the LFS etag) before it counts as
pulled. Bind it with the `local:` URL the pull returns.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from footnote.errors import ModelError, NotFound, ProviderUnavailable, UsageError

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Pulled:
    """A pulled model file: where it is, what it hashes to, the URL to bind it with."""

    repo: str
    filename: str
    revision: str
    path: Path
    size: int
    sha256: str

    @property
    def url(self) -> str:
        """The `local:` URL a role binds it with."""
        return f"local:{self.path}"


def _hub() -> tuple[object, object, object]:
    try:
        from huggingface_hub import HfApi, get_hf_file_metadata, hf_hub_url
    except ImportError as exc:
        raise ProviderUnavailable(
            "pulling models needs huggingface_hub: pip install 'footnote[hub]'"
        ) from exc
    return HfApi, get_hf_file_metadata, hf_hub_url


def choose_file(files: list[str], pattern: str | None) -> str:
    """The `.gguf` file to pull: the one matching `pattern` (a glob or a part of the name),
    or the only one; UsageError listing them when the choice is ambiguous."""
    ggufs = sorted(f for f in files if f.lower().endswith(".gguf"))
    if not ggufs:
        raise NotFound("the repository has no .gguf file")
    if pattern:
        chosen = [f for f in ggufs if fnmatch.fnmatch(f, pattern) or pattern.lower() in f.lower()]
    else:
        chosen = ggufs
    if len(chosen) == 1:
        return chosen[0]
    shown = ", ".join(chosen or ggufs)
    raise UsageError(f"choose one file (FILE or --pattern): {shown}")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pull_gguf(
    repo: str,
    cache_dir: Path,
    *,
    filename: str | None = None,
    revision: str = "main",
    endpoint: str | None = None,
    token: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Pulled:
    """Download one `.gguf` of `repo` into `cache_dir/hub/<repo>/` and verify its sha256."""
    hf_api, get_metadata, hub_url = _hub()
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    api = hf_api(endpoint=endpoint, token=token)  # type: ignore[operator]
    try:
        files = api.list_repo_files(repo, revision=revision)
        name = filename if filename and filename.lower().endswith(".gguf") else None
        name = name or choose_file(files, filename)
        if name not in files:
            raise NotFound(f"{repo} has no file {name!r}")
        meta = get_metadata(hub_url(repo, name, revision=revision, endpoint=endpoint), token=token)  # type: ignore[operator]
        if progress is not None:
            progress(f"downloading {repo}/{name} ({(meta.size or 0) / 2**20:.1f} MiB)")
        target = cache_dir / "hub" / repo.replace("/", "--")
        path = Path(
            hf_hub_download(
                repo, name, revision=revision, local_dir=target, endpoint=endpoint, token=token
            )
        )
    except HfHubHTTPError as exc:
        raise ModelError(f"the hub refused {repo}: {exc}") from exc
    except OSError as exc:
        raise ModelError(f"cannot pull {repo}: {exc}") from exc
    digest = _sha256(path)
    stated = (meta.etag or "").strip('"').lower()
    if _SHA256.match(stated) and stated != digest:
        path.unlink(missing_ok=True)
        raise ModelError(
            f"{repo}/{name}: downloaded sha256 {digest} differs from the hub's {stated}"
        )
    if not _SHA256.match(stated):
        raise ModelError(f"{repo}/{name}: the hub states no sha256 for it (etag {meta.etag!r})")
    return Pulled(repo, name, meta.commit_hash or revision, path, path.stat().st_size, digest)


def pulled_files(cache_dir: Path) -> list[Path]:
    """GGUF files pulled into the model cache."""
    return sorted((cache_dir / "hub").glob("*/**/*.gguf"))
