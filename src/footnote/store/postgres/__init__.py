"""The server store: one PostgreSQL database (psycopg 3, pooled), one class per noun, the
same tables and columns as the embedded SQLite store (`store.sqlite`)."""

from footnote.store.postgres.auth import PgAuthStore
from footnote.store.postgres.chat import PgChatStore
from footnote.store.postgres.db import PgDatabase
from footnote.store.postgres.documents import PgStore
from footnote.store.postgres.events import PgEventStore, PgFeedbackStore
from footnote.store.postgres.research import PgResearchStore
from footnote.store.postgres.review import PgReviewStore
from footnote.store.postgres.runs import PgRunStore

__all__ = [
    "PgAuthStore",
    "PgChatStore",
    "PgDatabase",
    "PgEventStore",
    "PgFeedbackStore",
    "PgResearchStore",
    "PgReviewStore",
    "PgRunStore",
    "PgStore",
]
