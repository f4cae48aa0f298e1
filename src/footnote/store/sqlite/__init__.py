"""The embedded store: one SQLite file (WAL) per workspace, one class per noun."""

from footnote.store.sqlite.auth import SqliteAuthStore
from footnote.store.sqlite.chat import SqliteChatStore
from footnote.store.sqlite.documents import SqliteStore, rollback
from footnote.store.sqlite.events import SqliteEventStore
from footnote.store.sqlite.feedback import SqliteFeedbackStore
from footnote.store.sqlite.research import SqliteResearchStore
from footnote.store.sqlite.review import SqliteReviewStore
from footnote.store.sqlite.runs import SqliteRunStore

__all__ = [
    "SqliteAuthStore",
    "SqliteChatStore",
    "SqliteEventStore",
    "SqliteFeedbackStore",
    "SqliteResearchStore",
    "SqliteReviewStore",
    "SqliteRunStore",
    "SqliteStore",
    "rollback",
]
