"""Store protocols: what the rest of footnote may ask of persistence, noun by noun.

The embedded implementations are in `store/sqlite/`; the composition root (`workspace.py`)
chooses one by the store URL.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from footnote.store.records import (
    ApiKey,
    ChatMessage,
    ChatSession,
    ResearchRecord,
    ReviewAction,
    SignOff,
    SourceRecord,
    Span,
    StoredEvent,
    User,
)
from footnote.types import Block, Document, EvidenceCard, Snapshot


class DocumentStore(Protocol):
    """Sources and their blocks. Block lookup by id is how citations resolve."""

    def save_document(self, document: Document) -> bool:
        """Store a document and its blocks in one transaction; False if a source with its id
        exists. It becomes the newest version of its (uri, owner). Any exception, of any
        type, rolls the whole write back."""
        ...

    def delete_source(self, source_id: str) -> bool:
        """Delete a source and its blocks (and, by cascade, everything indexed from them).
        Versions it superseded pass to its successor, or become current again."""
        ...

    def get_source(self, source_id: str) -> SourceRecord | None:
        """A source by id, or None."""
        ...

    def find_source_by_uri(self, uri: str, *, owner: str = "") -> SourceRecord | None:
        """The newest version `owner` ingested from `uri`, or None."""
        ...

    def list_sources(self, *, include_superseded: bool = False) -> list[SourceRecord]:
        """Sources, newest first."""
        ...

    def get_block(self, block_id: str) -> Block | None:
        """One block by id, or None."""
        ...

    def get_blocks(self, block_ids: Sequence[str]) -> dict[str, Block]:
        """Blocks by id."""
        ...

    def iter_blocks(self, source_id: str) -> Iterator[Block]:
        """A source's blocks in reading order."""
        ...

    def neighbours(self, block_id: str, radius: int = 1) -> list[Block]:
        """Blocks within `radius` positions of `block_id` in its source (itself included)."""
        ...

    def get_document(self, source_id: str) -> Document | None:
        """A stored document with its section tree."""
        ...

    def context_ids(self, blocks: Sequence[Block], radius: int) -> dict[str, list[str]]:
        """For each block: the ids of the blocks within `radius` positions in its source and
        (unless it is a heading) of the nearest heading before it, itself excluded, in
        reading order. One or two queries for all blocks, however many."""
        ...

    def close(self) -> None:
        """Close the connection."""
        ...


class AuthStore(Protocol):
    """Users and their API keys."""

    def add_user(self, user_id: str, groups: tuple[str, ...] = (), *, admin: bool = False) -> None:
        """Create a user or replace its groups and admin flag (UsageError for a group named
        like a personal group, `user:…`)."""
        ...

    def add_key(
        self, user_id: str, groups: tuple[str, ...] = (), label: str = "", *, admin: bool = False
    ) -> str:
        """Create (or update) the user and return a new API key for it; only its hash is kept."""
        ...

    def has_keys(self) -> bool:
        """Whether any API key exists (otherwise the server runs as one local user)."""
        ...

    def user_for_key(self, key: str) -> User | None:
        """The user an API key belongs to, or None. An admin's groups are None (reads
        everything); anyone else's include their personal group `user:<id>`. Notes when the
        key was used (at most once a minute)."""
        ...

    def list_keys(self) -> list[ApiKey]:
        """Every API key, oldest first: its id (a prefix of its hash), user, groups, label,
        creation and last use; never a secret."""
        ...

    def revoke_key(self, key_id: str) -> ApiKey:
        """Delete the key with this id or unique id prefix (NotFound / UsageError otherwise)."""
        ...

    def rotate_key(self, key_id: str) -> tuple[str, ApiKey]:
        """A new secret for the key's user and label, the old key revoked at once; returns the
        new secret (shown once) and the new key."""
        ...


class ChatStore(Protocol):
    """Chat sessions and messages, each read and write scoped to the owner's user id."""

    def create_session(self, user_id: str, title: str = "") -> ChatSession:
        """A new session with a server-generated id."""
        ...

    def get_session(self, user_id: str, session_id: str) -> ChatSession | None:
        """The user's session, or None (also when it is somebody else's)."""
        ...

    def list_sessions(self, user_id: str, limit: int = 100, offset: int = 0) -> list[ChatSession]:
        """The user's sessions, most recently active first."""
        ...

    def rename_session(self, user_id: str, session_id: str, title: str) -> bool:
        """Rename; False when the user has no such session."""
        ...

    def delete_session(self, user_id: str, session_id: str) -> bool:
        """Delete a session with its messages, runs, events, traces and feedback."""
        ...

    def set_summary(
        self, user_id: str, session_id: str, summary: str, upto: int, labels: tuple[str, ...]
    ) -> None:
        """Store the running summary of the messages up to `upto` (a seq) and the labels it
        carries (those of the summarised turns' citations, plus the previous summary's)."""
        ...

    def add_message(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        status: str = "completed",
        run_id: str | None = None,
        data: dict[str, Any] | None = None,
        labels: Sequence[str] | None = None,
    ) -> ChatMessage:
        """Append a message to the session (which must be the user's); `labels` None: unknown."""
        ...

    def update_message(
        self,
        user_id: str,
        message_id: str,
        *,
        content: str,
        status: str,
        data: dict[str, Any],
        labels: Sequence[str] | None = None,
    ) -> ChatMessage | None:
        """Fill in a reply when its run ends, with the labels it was produced under."""
        ...

    def get_message(self, user_id: str, message_id: str) -> ChatMessage | None:
        """The user's message, or None."""
        ...

    def messages(
        self, user_id: str, session_id: str, *, after: int = 0, last: int | None = None
    ) -> list[ChatMessage]:
        """A session's messages in order (seq > `after`; only the `last` n when given)."""
        ...

    def last_final_seq(self, user_id: str, session_id: str) -> int:
        """The seq of the session's last finished (not pending) message; 0 when none."""
        ...

    def fail_pending_messages(self) -> int:
        """Mark replies left pending by a previous server process as failed."""
        ...


class EventStore(Protocol):
    """A run's persisted events (the SSE stream's replay)."""

    def add_events(self, run_id: str, events: list[StoredEvent]) -> None:
        """Persist events of a run in one transaction."""
        ...

    def events(self, run_id: str, after: int = 0) -> list[StoredEvent]:
        """A run's persisted events with seq > `after`, in order."""
        ...


class RunStore(Protocol):
    """Runs, their trace spans, owners and the runs they started."""

    def start(
        self,
        run_id: str,
        kind: str,
        input: dict[str, Any],
        *,
        user_id: str = "local",
        session_id: str | None = None,
    ) -> None:
        """Record that a run started."""
        ...

    def add_span(self, span: Span) -> None:
        """Append a span."""
        ...

    def finish(self, run_id: str, status: str, output: dict[str, Any] | None) -> None:
        """Record a run's outcome."""
        ...

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """A run's row as a dict, or None."""
        ...

    def spans(self, run_id: str) -> list[Span]:
        """A run's spans in order."""
        ...

    def run_owner(self, run_id: str) -> tuple[str, str | None] | None:
        """(user_id, session_id) of a run, or None."""
        ...

    def link_runs(self, parent_id: str, child_id: str) -> None:
        """Record that `child_id` (e.g. an ask run) was started by `parent_id`."""
        ...

    def run_family(self, run_id: str) -> list[str]:
        """The run and every run it started, recursively, in start order."""
        ...

    def session_runs(self, user_id: str, session_id: str) -> list[str]:
        """Ids of every run of a session, oldest first."""
        ...

    def fail_orphaned_runs(
        self, kinds: tuple[str, ...], *, alive: Callable[[str], bool] | None = None
    ) -> list[str]:
        """Mark runs left `running` by a server process that is gone as failed; their ids.
        `alive(run_id)`, when given, spares the runs another live replica executes."""
        ...


class FeedbackStore(Protocol):
    """Feedback on runs."""

    def add_feedback(
        self, user_id: str, run_id: str, message_id: str | None, rating: int, comment: str
    ) -> str:
        """Store a 👍 (1) or 👎 (-1) with the run it is about."""
        ...

    def feedback(self, run_ids: list[str]) -> list[dict[str, Any]]:
        """Feedback on these runs, oldest first."""
        ...


class ResearchStore(Protocol):
    """Research runs and every stage's artifact, their evidence cards and the page snapshots.

    Artifacts are JSON objects keyed by (run, stage, key): writing one again replaces it, so a
    stage that finished is never redone when a run resumes. Snapshots are shared by runs."""

    def create_research(
        self, run_id: str, user_id: str, question: str, options: dict[str, Any], state: str
    ) -> None:
        """Record a new research run."""
        ...

    def get_research(self, run_id: str) -> ResearchRecord | None:
        """A research run, or None."""
        ...

    def list_research(self, user_id: str | None, limit: int = 50) -> list[ResearchRecord]:
        """The user's research runs (every user's with None: the operator), newest first."""
        ...

    def set_research_state(
        self, run_id: str, state: str, options: dict[str, Any] | None = None
    ) -> None:
        """Move a run to `state` (and replace its options when given)."""
        ...

    def put_artifact(self, run_id: str, stage: str, key: str, data: dict[str, Any]) -> None:
        """Store (or replace) one stage's artifact."""
        ...

    def get_artifact(self, run_id: str, stage: str, key: str = "") -> dict[str, Any] | None:
        """One artifact, or None."""
        ...

    def artifacts(self, run_id: str, stage: str) -> list[tuple[str, dict[str, Any]]]:
        """A stage's artifacts as (key, data), in the order first written."""
        ...

    def delete_artifacts(self, run_id: str, stages: Sequence[str]) -> None:
        """Forget these stages' artifacts (an edited outline invalidates what followed)."""
        ...

    def put_cards(self, run_id: str, cards: Sequence[EvidenceCard]) -> None:
        """Store (or replace, by id) evidence cards of a run."""
        ...

    def cards(self, run_id: str) -> list[EvidenceCard]:
        """A run's cards in the order first stored."""
        ...

    def put_snapshot(self, snapshot: Snapshot, raw: bytes) -> None:
        """Store a snapshot and its raw bytes (idempotent; bytes kept once per sha256)."""
        ...

    def get_snapshot(self, snapshot_id: str) -> Snapshot | None:
        """A snapshot by id, or None."""
        ...

    def snapshot_raw(self, snapshot_id: str) -> bytes | None:
        """The raw bytes a snapshot was made from, or None."""
        ...


class ReviewStore(Protocol):
    """The analyst's review of research runs: an append-only, hash-chained action log per run
    and the signed versions (neither is ever updated or deleted)."""

    def append_action(
        self, run_id: str, actor: str, action: str, target: str, data: dict[str, Any]
    ) -> ReviewAction:
        """Append one action to the run's log, chained to the one before; returns it."""
        ...

    def actions(self, run_id: str) -> list[ReviewAction]:
        """The run's log in order."""
        ...

    def add_signoff(
        self, run_id: str, reviewer: str, version_hash: str, coverage: dict[str, Any],
        brief: dict[str, Any], *, after_seq: int | None = None,
    ) -> SignOff:  # fmt: skip
        """Record a sign-off (logged as a `sign_off` action); the next version number; refused
        when `after_seq` is given and the log has grown past it."""
        ...

    def signoffs(self, run_id: str) -> list[SignOff]:
        """The run's signed versions, oldest first."""
        ...
