"""Persistence behind protocols: SQLite by default (`open_store`)."""

from footnote.store.base import DocumentStore, SourceRecord
from footnote.store.sqlite import SqliteStore, open_store

__all__ = ["DocumentStore", "SourceRecord", "SqliteStore", "open_store"]
