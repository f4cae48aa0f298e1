"""Persistence behind protocols (`store.base`), with records in `store.records`; the embedded
SQLite implementations in `store.sqlite`, graph engines in `store.graph`."""

from footnote.store.base import (
    AuthStore,
    ChatStore,
    DocumentStore,
    EventStore,
    FeedbackStore,
    RunStore,
)
from footnote.store.records import SourceRecord

__all__ = [
    "AuthStore",
    "ChatStore",
    "DocumentStore",
    "EventStore",
    "FeedbackStore",
    "RunStore",
    "SourceRecord",
]
