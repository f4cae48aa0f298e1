"""The records the stores hand out (frozen dataclasses), and how their ids are made."""

from __future__ import annotations

import hashlib
import json
import secrets
from dataclasses import dataclass, field
from typing import Any

from footnote.types import Source


def new_id(prefix: str) -> str:
    """A fresh unguessable id (`ses_…`, `msg_…`, `run_…`): 96 random bits."""
    return f"{prefix}_{secrets.token_hex(12)}"


def hash_key(key: str) -> str:
    """How an API key is stored (never the key itself)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SourceRecord:
    """A stored source with bookkeeping: block count and whether a newer version exists."""

    source: Source
    blocks: int
    created_at: str
    superseded_by: str | None = None


@dataclass(frozen=True)
class User:
    """A caller: id plus the ACL groups retrieval filters on (None: unrestricted: the local
    user, an admin). A keyed user's groups include their personal group (`user:<id>`)."""

    id: str
    groups: tuple[str, ...] | None
    admin: bool = False


KEY_ID_LEN = 12
"""An API key's public id: this many leading hex digits of its stored hash (never a secret)."""


@dataclass(frozen=True)
class ApiKey:
    """An API key as listed: its public id (a prefix of its hash), never the secret."""

    id: str
    user_id: str
    groups: tuple[str, ...]
    admin: bool
    label: str
    created_at: str
    last_used_at: str | None = None


@dataclass(frozen=True)
class ChatSession:
    """A conversation owned by one user."""

    id: str
    user_id: str
    title: str
    summary: str
    summary_upto: int
    last_seq: int
    created_at: str
    updated_at: str
    summary_labels: tuple[str, ...] = ()
    """Labels of the sources the summarised turns cited: the summary carries them."""


CLIENT_CONTEXT_ROLE = "context"
"""The role of conversation history a client supplied (an OpenAI client's earlier `assistant`
turns): context for rewriting the question, never listed, rendered or exported as a reply."""


@dataclass(frozen=True)
class ChatMessage:
    """One message; `seq` orders a session, `data` holds the rewrite and the answer JSON."""

    id: str
    session_id: str
    seq: int
    role: str
    content: str
    status: str
    run_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    labels: tuple[str, ...] | None = None
    """The labels of the text this message was produced under, kept with it; None when
    unknown (client-supplied context, rows from before labels were kept): restricted."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by the API and the window cache."""
        return {
            "id": self.id,
            "session_id": self.session_id,
            "seq": self.seq,
            "role": self.role,
            "content": self.content,
            "status": self.status,
            "run_id": self.run_id,
            "data": self.data,
            "created_at": self.created_at,
            "labels": None if self.labels is None else list(self.labels),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChatMessage:
        """Inverse of `to_dict`."""
        return cls(
            d["id"], d["session_id"], int(d["seq"]), d["role"], d["content"], d["status"],
            d.get("run_id"), dict(d.get("data") or {}), d.get("created_at", ""),
            None if d.get("labels") is None else tuple(d["labels"]),
        )  # fmt: skip


@dataclass(frozen=True)
class StoredEvent:
    """A persisted run event: `seq` is the SSE id (1, 2, … per run)."""

    seq: int
    type: str
    data: str


@dataclass(frozen=True)
class Span:
    """One traced step of a run."""

    run_id: str
    seq: int
    kind: str
    name: str
    data: dict[str, Any]
    started_at: float
    duration_s: float


@dataclass(frozen=True)
class ResearchRecord:
    """A research run: who asked what, with which options, and how far it got (`state`)."""

    id: str
    user_id: str
    question: str
    options: dict[str, Any]
    state: str
    created_at: str
    updated_at: str


GENESIS_HASH = "0" * 64
"""The `prev_hash` of a review log's first action."""


@dataclass(frozen=True)
class ReviewAction:
    """One entry of a run's append-only review log; `hash` chains it to the one before."""

    run_id: str
    seq: int
    at: str
    actor: str
    action: str
    target: str
    data: dict[str, Any]
    prev_hash: str
    hash: str


def action_hash(
    prev_hash: str, run_id: str, seq: int, at: str, actor: str, action: str, target: str,
    data: dict[str, Any],
) -> str:  # fmt: skip
    """The chained hash of a review action: sha256 of the previous hash and the action."""
    body = json.dumps([run_id, seq, at, actor, action, target, data], ensure_ascii=False,
                      sort_keys=True, separators=(",", ":"), default=str)  # fmt: skip
    return hashlib.sha256(f"{prev_hash}\n{body}".encode()).hexdigest()


@dataclass(frozen=True)
class SignOff:
    """A signed version of a brief: who signed which exact version, when, after what review."""

    run_id: str
    version: int
    version_hash: str
    reviewer: str
    signed_at: str
    coverage: dict[str, Any]
    brief: dict[str, Any]
    action_seq: int


def review_json(data: Any) -> str:
    """The canonical JSON a review row stores (and an action's hash covers)."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, default=str)


def review_action_from_row(r: Any) -> ReviewAction:
    """A `review_actions` row (any mapping by column name) as a ReviewAction."""
    return ReviewAction(r["run_id"], r["seq"], r["at"], r["actor"], r["action"], r["target"],
                        json.loads(r["data"]), r["prev_hash"], r["hash"])  # fmt: skip


def signoff_from_row(r: Any) -> SignOff:
    """A `review_signoffs` row (any mapping by column name) as a SignOff."""
    return SignOff(r["run_id"], r["version"], r["version_hash"], r["reviewer"], r["signed_at"],
                   json.loads(r["coverage"]), json.loads(r["brief"]), r["action_seq"])  # fmt: skip
