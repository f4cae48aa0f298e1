"""Which store and search backends a workspace gets, chosen by the store URL.

`sqlite:///PATH` is the embedded store (FTS5 + SQLite vectors with derived files under
`<workspace>/index`); `postgresql://…` is the server store (PostgreSQL full-text + pgvector),
which any number of API replicas and workers share.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from footnote.config import Settings
from footnote.errors import ConfigError
from footnote.store.base import (
    AuthStore,
    ChatStore,
    DocumentStore,
    EventStore,
    FeedbackStore,
    ResearchStore,
    ReviewStore,
    RunStore,
)

if TYPE_CHECKING:
    from footnote.index import LexicalBackend, VectorBackend
    from footnote.models.base import LabelledEmbedder

SERVER_SCHEMES = ("postgresql://", "postgres://")


@dataclass(frozen=True)
class Stores:
    """Every noun's store on one database."""

    documents: DocumentStore
    auth: AuthStore
    chats: ChatStore
    events: EventStore
    runs: RunStore
    feedback: FeedbackStore
    research: ResearchStore
    review: ReviewStore


def is_server_url(url: str) -> bool:
    """Whether a store URL names the PostgreSQL store."""
    return url.startswith(SERVER_SCHEMES)


def open_stores(url: str, *, pool_size: int = 8) -> Stores:
    """The stores named by a URL (`sqlite:///PATH` or `postgresql://…`)."""
    if url.startswith("sqlite:///"):
        from footnote.store.sqlite import (
            SqliteAuthStore,
            SqliteChatStore,
            SqliteEventStore,
            SqliteFeedbackStore,
            SqliteResearchStore,
            SqliteReviewStore,
            SqliteRunStore,
            SqliteStore,
        )

        store = SqliteStore(Path(url[len("sqlite:///") :]))
        return Stores(
            store, SqliteAuthStore(store), SqliteChatStore(store), SqliteEventStore(store),
            SqliteRunStore(store), SqliteFeedbackStore(store), SqliteResearchStore(store),
            SqliteReviewStore(store),
        )  # fmt: skip
    if is_server_url(url):
        try:
            from footnote.store.postgres import (
                PgAuthStore,
                PgChatStore,
                PgDatabase,
                PgEventStore,
                PgFeedbackStore,
                PgResearchStore,
                PgReviewStore,
                PgRunStore,
                PgStore,
            )
        except ImportError as exc:  # the optional extra is not installed
            raise ConfigError(
                f"the PostgreSQL store needs `pip install footnote[postgres]` ({exc})"
            ) from exc
        db = PgDatabase(url, pool_size=pool_size)
        return Stores(
            PgStore(db), PgAuthStore(db), PgChatStore(db), PgEventStore(db), PgRunStore(db),
            PgFeedbackStore(db), PgResearchStore(db), PgReviewStore(db),
        )  # fmt: skip
    raise ConfigError(
        f"unsupported store URL {url!r}: use sqlite:///PATH (embedded) or postgresql://… (server)"
    )


def search_backends(
    settings: Settings, store: DocumentStore, embedder: LabelledEmbedder
) -> tuple[LexicalBackend, VectorBackend]:
    """The lexical and vector backends that go with the store."""
    if type(store).__module__.startswith("footnote.store.postgres"):
        # imported only here: the embedded install has no PostgreSQL driver
        from footnote.index.postgres import PgLexical, PgVectors
        from footnote.store.postgres import PgStore

        if isinstance(store, PgStore):
            lexical = PgLexical(store)
            return lexical, PgVectors(store, embedder.name, embedder.dim, settings.retrieval)
    from footnote.index.indexer import embedded_backends

    return embedded_backends(store, embedder, settings.retrieval, settings.workspace / "index")
