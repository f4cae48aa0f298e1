"""Conversation memory: recent turns verbatim, older turns folded into a running summary.

Messages live in the store. A sliding window of each session's recent messages is cached in
Redis (`RPUSH`+`LTRIM`+`EXPIRE` in one MULTI) or, embedded, in an in-process LRU with TTL.
The cache is checked against the store's last sequence number, rebuilt on a miss, and
skipped entirely while Redis is down: the store alone is always enough.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

from footnote.config import ChatSettings
from footnote.models.roles import NO_EXTERNAL
from footnote.store.base import ChatStore
from footnote.store.records import ChatMessage
from footnote.textnorm import CJK_IDEOGRAPHS

log = logging.getLogger(__name__)
T = TypeVar("T")
_TOKEN = re.compile(rf"[{CJK_IDEOGRAPHS}]|\w+|[^\w\s]")
MESSAGE_CHARS = 800
"""A message longer than this is cut when quoted into a prompt."""


def message_labels(messages: Sequence[ChatMessage]) -> tuple[str, ...]:
    """The labels these messages carry into a prompt: each message's own, as kept when it was
    produced (never recomputed from live sources, which may since be deleted or relabelled);
    a message whose labels are unknown (client-supplied context, older rows) counts as
    `no-external-model`: text the server cannot prove unlabelled never leaves."""
    labels: dict[str, None] = {}
    for m in messages:
        for label in (NO_EXTERNAL,) if m.labels is None else m.labels:
            labels[label] = None
    return tuple(labels)


def approx_tokens(text: str) -> int:
    """A model-free token estimate: words, CJK characters and punctuation marks."""
    return len(_TOKEN.findall(text))


class MessageWindow(Protocol):
    """A per-session cache of recent messages (JSON dicts), oldest first."""

    async def read(self, key: str) -> list[dict[str, Any]] | None:
        """The cached messages, or None on a miss (or when the cache is unavailable)."""
        ...

    async def append(self, key: str, message: dict[str, Any]) -> bool:
        """Append to an existing window; False when there is none (the caller rebuilds)."""
        ...

    async def replace(self, key: str, messages: list[dict[str, Any]]) -> None:
        """Set the window to these messages."""
        ...

    async def drop(self, key: str) -> None:
        """Forget a session's window."""
        ...


class LocalWindow:
    """In-process LRU of windows with a TTL: the embedded stand-in for Redis."""

    def __init__(self, size: int, ttl_s: float, max_sessions: int = 10_000) -> None:
        self.size, self.ttl_s, self.max_sessions = size, ttl_s, max_sessions
        self._d: OrderedDict[str, tuple[float, list[dict[str, Any]]]] = OrderedDict()

    def _live(self, key: str) -> list[dict[str, Any]] | None:
        hit = self._d.get(key)
        if hit is None or hit[0] < time.monotonic():
            self._d.pop(key, None)
            return None
        self._d[key] = (time.monotonic() + self.ttl_s, hit[1])
        self._d.move_to_end(key)
        return hit[1]

    async def read(self, key: str) -> list[dict[str, Any]] | None:
        """The cached window or None."""
        live = self._live(key)
        return list(live) if live is not None else None

    async def append(self, key: str, message: dict[str, Any]) -> bool:
        """Push onto an existing window, trimming to `size`."""
        live = self._live(key)
        if live is None:
            return False
        live.append(message)
        del live[: -self.size]
        return True

    async def replace(self, key: str, messages: list[dict[str, Any]]) -> None:
        """Set a window, evicting the least recently used beyond `max_sessions`."""
        self._d[key] = (time.monotonic() + self.ttl_s, list(messages[-self.size :]))
        self._d.move_to_end(key)
        while len(self._d) > self.max_sessions:
            self._d.popitem(last=False)

    async def drop(self, key: str) -> None:
        """Forget a window."""
        self._d.pop(key, None)


class RedisWindow:
    """Windows in Redis lists. Any Redis failure turns into a miss; retried after a pause."""

    def __init__(self, url: str, size: int, ttl_s: int, *, retry_after_s: float = 5.0) -> None:
        import redis.asyncio as aioredis

        self.size, self.ttl_s, self.retry_after_s = size, ttl_s, retry_after_s
        self.client: Any = aioredis.from_url(
            url, socket_timeout=0.5, socket_connect_timeout=0.5, decode_responses=True
        )
        self.down_until = 0.0
        self.failures = 0

    @property
    def available(self) -> bool:
        """False while Redis is considered down."""
        return time.monotonic() >= self.down_until

    async def _safely(self, op: Callable[[], Awaitable[T]]) -> T | None:
        if not self.available:
            return None
        try:
            return await op()
        except Exception as exc:  # redis.RedisError, OSError, timeouts: degrade to the store
            self.failures += 1
            self.down_until = time.monotonic() + self.retry_after_s
            log.warning("redis window unavailable (%s); using the store alone", exc)
            return None

    async def read(self, key: str) -> list[dict[str, Any]] | None:
        """LRANGE the window (None on a miss or while Redis is down)."""

        async def op() -> list[str]:
            return list(await self.client.lrange(key, 0, -1))

        raw = await self._safely(op)
        return [json.loads(r) for r in raw] if raw else None

    async def append(self, key: str, message: dict[str, Any]) -> bool:
        """RPUSHX + LTRIM + EXPIRE in one MULTI; False when the list did not exist."""
        body = json.dumps(message, ensure_ascii=False, default=str)

        async def op() -> bool:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.rpushx(key, body).ltrim(key, -self.size, -1).expire(key, self.ttl_s)
                length, *_ = await pipe.execute()
            return bool(length)

        return bool(await self._safely(op))

    async def replace(self, key: str, messages: list[dict[str, Any]]) -> None:
        """DEL + RPUSH + EXPIRE in one MULTI."""
        bodies = [json.dumps(m, ensure_ascii=False, default=str) for m in messages[-self.size :]]

        async def op() -> None:
            async with self.client.pipeline(transaction=True) as pipe:
                pipe.delete(key)
                if bodies:
                    pipe.rpush(key, *bodies).expire(key, self.ttl_s)
                await pipe.execute()

        await self._safely(op)

    async def drop(self, key: str) -> None:
        """DEL the window."""

        async def op() -> None:
            await self.client.delete(key)

        await self._safely(op)

    async def close(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()


@dataclass(frozen=True)
class MemoryContext:
    """What a turn may know about the conversation: a summary and recent turns verbatim."""

    summary: str
    turns: tuple[ChatMessage, ...]
    summary_labels: tuple[str, ...] = ()
    """The labels the summary carries into a prompt."""

    def render(self) -> str:
        """The conversation as prompt text (data, not instructions)."""
        lines = [f"Summary of earlier turns: {self.summary}"] if self.summary else []
        for m in self.turns:
            text = " ".join(m.content.split())
            cut = text[:MESSAGE_CHARS] + ("…" if len(text) > MESSAGE_CHARS else "")
            lines.append(f"{m.role}: {cut}")
        return "\n".join(lines)


Summarise = Callable[[str, tuple[str, ...], list[ChatMessage]], Awaitable[str]]
"""`summarise(previous_summary, its_labels, messages) -> new summary` (a model call)."""


class ConversationMemory:
    """Messages in the store, the window in front, the context within a token budget."""

    def __init__(
        self,
        chats: ChatStore,
        window: MessageWindow,
        settings: ChatSettings,
        *,
        count_tokens: Callable[[str], int] = approx_tokens,
    ) -> None:
        self.chats, self.window, self.settings = chats, window, settings
        self.count_tokens = count_tokens
        self.hits = self.misses = 0

    @staticmethod
    def key(user_id: str, session_id: str) -> str:
        """The window's cache key: sessions are keyed `user_id:session_id`."""
        return f"footnote:window:{user_id}:{session_id}"

    async def add(
        self,
        user_id: str,
        session_id: str,
        role: str,
        content: str,
        *,
        labels: Sequence[str] | None = None,
        **kw: Any,
    ) -> ChatMessage:
        """Persist a message; finished ones also go to the window. A user's own question
        carries no labels; any other message without `labels` is unknown (restricted)."""
        if labels is None and role == "user":
            labels = ()
        msg = self.chats.add_message(user_id, session_id, role, content, labels=labels, **kw)
        if msg.status != "pending":
            await self._push(user_id, session_id, msg)
        return msg

    async def finish(
        self,
        user_id: str,
        message: ChatMessage,
        content: str,
        status: str,
        data: dict[str, Any],
        labels: tuple[str, ...] | None,
    ) -> ChatMessage:
        """Fill in a pending reply with the labels it was produced under; push it to the window."""
        done = self.chats.update_message(
            user_id, message.id, content=content, status=status, data=data, labels=labels
        ) or replace(message, content=content, status=status, data=data, labels=labels)
        await self._push(user_id, message.session_id, done)
        return done

    async def _push(self, user_id: str, session_id: str, msg: ChatMessage) -> None:
        key = self.key(user_id, session_id)
        if not await self.window.append(key, msg.to_dict()):
            await self._rebuild(user_id, session_id)

    async def _rebuild(self, user_id: str, session_id: str) -> list[ChatMessage]:
        last = self.chats.messages(user_id, session_id, last=self.settings.window_messages)
        msgs = [m for m in last if m.status != "pending"]
        await self.window.replace(self.key(user_id, session_id), [m.to_dict() for m in msgs])
        return msgs

    async def recent(
        self, user_id: str, session_id: str, before: int | None = None
    ) -> list[ChatMessage]:
        """The window's finished messages (seq < `before`); the cache is used when current."""
        cached = await self.window.read(self.key(user_id, session_id))
        if cached and cached[-1].get("seq") == self.chats.last_final_seq(user_id, session_id):
            self.hits += 1
            msgs = [ChatMessage.from_dict(d) for d in cached]
        else:
            self.misses += 1
            msgs = await self._rebuild(user_id, session_id)
        return [m for m in msgs if before is None or m.seq < before]

    async def context(self, user_id: str, session_id: str, before: int) -> MemoryContext:
        """Summary + the last `history_turns` turns before message `before`, within budget."""
        session = self.chats.get_session(user_id, session_id)
        summary = session.summary if session else ""
        recent = await self.recent(user_id, session_id, before)
        if len(recent) < 2 * self.settings.history_turns and session and session.summary_upto:
            # the window is shorter than the verbatim span: read the gap from the store
            recent = self.chats.messages(user_id, session_id, after=session.summary_upto)
            recent = [m for m in recent if m.status != "pending" and m.seq < before]
        upto = session.summary_upto if session else 0
        turns = [m for m in recent if m.seq > upto and m.content][
            -2 * self.settings.history_turns :
        ]
        budget = self.settings.memory_tokens - self.count_tokens(summary)
        while turns and sum(self.count_tokens(m.content[:MESSAGE_CHARS]) for m in turns) > budget:
            turns.pop(0)
        labels = session.summary_labels if session else ()
        return MemoryContext(summary, tuple(turns), labels if summary else ())

    async def fold(self, user_id: str, session_id: str, summarise: Summarise) -> bool:
        """Fold finished messages older than the verbatim turns into the running summary."""
        session = self.chats.get_session(user_id, session_id)
        if session is None:
            return False
        msgs = self.chats.messages(user_id, session_id, after=session.summary_upto)
        msgs = [m for m in msgs if m.status != "pending"]
        older = msgs[: max(0, len(msgs) - 2 * self.settings.history_turns)]
        if len(older) < 2:
            return False
        carried = session.summary_labels if session.summary else ()
        summary = await summarise(session.summary, carried, older)
        labels = tuple(dict.fromkeys([*carried, *message_labels(older)]))
        limit = self.settings.summary_tokens
        words = summary.split()
        if self.count_tokens(summary) > limit:
            summary = " ".join(words[: max(1, limit * 3 // 4)])
        self.chats.set_summary(user_id, session_id, summary.strip(), older[-1].seq, labels)
        return True
