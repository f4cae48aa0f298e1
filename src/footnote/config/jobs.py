"""Settings of background jobs (`jobs.*`): which queue ingest, research and eval jobs go through."""

from __future__ import annotations

from pydantic import Field

from footnote.config.base import _Section


class JobsSettings(_Section):
    """The job queue (`footnote worker` runs its workers)."""

    url: str = Field(
        "",
        description="Queue URL. Empty or `sqlite` means `sqlite:///<workspace>/jobs.db` (embedded: "
        "a SQLite-backed queue, worked by the process that opens it); `sqlite:///PATH` names the "
        "file; `redis://host:6379/0` is the distributed queue that any number of "
        "`footnote worker` processes share.",
    )
    name: str = Field(
        "footnote",
        description="Queue name: the prefix of every Redis key and of the SQLite queue's rows "
        "(letters, digits, `_` and `-`), so several deployments can share one Redis.",
        pattern=r"^[A-Za-z0-9_-]{1,64}$",
    )
    workers: int = Field(2, ge=1, le=64, description="Jobs one `footnote worker` runs at once.")
    server_threads: int = Field(
        1,
        ge=0,
        le=64,
        description="Jobs the API server process works itself (uploads are ingested as jobs); "
        "0: none, `footnote worker` processes do them all.",
    )
    lease_s: float = Field(
        30.0,
        gt=0,
        description="Seconds a worker's claim on a job lasts unrenewed (renewed every third of "
        "it); a job whose worker died is handed to another worker this long after.",
    )
    max_attempts: int = Field(
        3,
        ge=1,
        le=100,
        description="Tries of a job (a failure or a lost worker each count one) before it is "
        "marked failed.",
    )
    retry_delay_s: float = Field(
        5.0, ge=0, description="Seconds before a job that raised an error is tried again."
    )
