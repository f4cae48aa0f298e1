"""Stored evaluation runs: `<workspace>/eval/<run_id>/` with `run.json` and `cases.jsonl`.

`run.json` holds the dataset, options, settings, model bindings and git revision;
`cases.jsonl` one line per finished case (the case, its output and its scores), appended as
cases finish, so an interrupted run resumes by skipping the ids already there.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from footnote.errors import NotFound, UsageError

RUN_FILE, CASES_FILE = "run.json", "cases.jsonl"


def git_revision(cwd: Path | None = None) -> str | None:
    """The checkout's commit (with `+dirty` when it has changes), or None outside git."""
    here = cwd or Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def new_run_id(dataset: str, mode: str) -> str:
    """A sortable, readable run id."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in dataset)[:40]
    return f"{stamp}-{safe}-{mode}-{secrets.token_hex(2)}"


@dataclass
class EvalRun:
    """One run's folder: metadata plus the finished cases."""

    dir: Path
    meta: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def id(self) -> str:
        """The run id (the folder name)."""
        return self.dir.name

    @property
    def done_ids(self) -> set[str]:
        """Ids of cases already finished."""
        return {r["case"]["id"] for r in self.records}

    def add(self, record: dict[str, Any]) -> None:
        """Append one finished case (flushed at once, so a crash loses at most this one; a
        line a crash left half-written is ended first, so this one stays whole)."""
        with self._lock:
            self.records.append(record)
            path = self.dir / CASES_FILE
            torn = path.is_file() and _ends_torn(path)
            with path.open("a", encoding="utf-8") as f:
                line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
                f.write("\n" + line if torn else line)

    def save_meta(self) -> None:
        """Rewrite `run.json`."""
        (self.dir / RUN_FILE).write_text(
            json.dumps(self.meta, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
        )


def _ends_torn(path: Path) -> bool:
    """Whether the file's last line has no newline (a write cut short)."""
    with path.open("rb") as f:
        f.seek(0, 2)
        if f.tell() == 0:
            return False
        f.seek(-1, 2)
        return f.read(1) != b"\n"


def runs_dir(workspace: Path) -> Path:
    """Where a workspace keeps its evaluation runs."""
    return workspace / "eval"


def create_run(workspace: Path, run_id: str, meta: dict[str, Any]) -> EvalRun:
    """Make a new run folder with its metadata."""
    folder = runs_dir(workspace) / run_id
    if folder.exists():
        raise UsageError(f"evaluation run {run_id!r} already exists")
    folder.mkdir(parents=True)
    run = EvalRun(folder, {**meta, "run_id": run_id, "started_at": time.time()})
    run.save_meta()
    return run


def open_run(workspace: Path, run_id: str) -> EvalRun:
    """A stored run, its finished cases loaded (a torn last line is ignored)."""
    folder = runs_dir(workspace) / run_id
    if not (folder / RUN_FILE).is_file():
        raise NotFound(f"no evaluation run {run_id!r} in {runs_dir(workspace)}")
    meta = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
    records = []
    path = folder / CASES_FILE
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return EvalRun(folder, meta, records)


def list_runs(workspace: Path) -> list[dict[str, Any]]:
    """Every stored run's metadata, oldest first."""
    base = runs_dir(workspace)
    if not base.is_dir():
        return []
    metas = []
    for folder in sorted(base.iterdir()):
        if (folder / RUN_FILE).is_file():
            meta = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
            lines = (
                (folder / CASES_FILE).read_text().count("\n")
                if (folder / CASES_FILE).is_file()
                else 0
            )
            metas.append({**meta, "finished_cases": lines})
    return metas
