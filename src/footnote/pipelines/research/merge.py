"""Merge, deterministic first: which sources are the same document or copies of one story.

1. Identity by code: canonical URL (a page's declared canonical link counts only on its own
   host), DOI / arXiv id, content hash of the normalised text.
2. Near-duplicates: MinHash over word shingles (datasketch), grouped by LSH.
3. Origin of each group: a member that the others link to (a credited reprint), else the
   earliest-dated member if the `judge` model agrees the texts are one story with confidence at
   or above `attribution_confidence`; otherwise the group stays undecided for the analyst.
   When that call is refused (budget, licence) or fails, the deterministic merge stands and
   the group stays undecided, its basis saying the call was not made.

4. Origins named in the text (`origins`): cards of different sources that name one report,
   agency, study or document restate it and count as that one origin (`same_origin`, with the
   origin as candidate, the basis and a confidence); a card whose source is that origin is its
   own statement. Cards that quote one figure without naming its source stay `unconfirmed`,
   listed as undecided for the analyst, who decides each group in review (`origin_review`):
   one origin, secondary reports of one, or independent (confirmed, the decision logged).

Every source ends `independent`, `same_origin` (a copy of another source: never counted as
corroboration) or `unconfirmed` (independence not shown: never counted either); every card
says on what basis. A page that merely claims a document number or an early date does not
become the origin by that claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from datasketch import MinHash, MinHashLSH  # type: ignore[import-untyped]

from footnote.errors import BudgetExceeded, ModelError
from footnote.pipelines.research.origins import (
    OriginMention,
    figures_in,
    names_itself,
    origin_mentions,
    same_origin,
    shared_figure,
)
from footnote.serialize import from_plain
from footnote.textnorm import normalise, tokens
from footnote.types import EvidenceCard, Independence, Snapshot, SourceType, sha256_hex

_TRACKING = re.compile(r"^(utm_|fbclid$|gclid$|ref$|mc_)")
SameStoryFn = Callable[[Snapshot, Snapshot], float]
"""`same_story(a, b) -> P(b is a copy or rewrite of a)` (the judge model)."""


def canonical_url(url: str) -> str:
    """A URL with case, default ports, fragments, tracking parameters and `www.` folded."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower().removeprefix("www.")
    port = parts.port
    netloc = host if port in (None, 80, 443) else f"{host}:{port}"
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query) if not _TRACKING.match(k)))
    path = re.sub(r"/index\.html?$", "/", parts.path or "/").rstrip("/") or "/"
    return urlunsplit(
        ("https" if parts.scheme in ("http", "https") else parts.scheme, netloc, path, query, "")
    )


def _hostless(url: str) -> str:
    parts = urlsplit(canonical_url(url))
    return (parts.hostname or "") + parts.path


def identity_keys(snap: Snapshot) -> list[str]:
    """Keys under which two snapshots are the same document."""
    keys = ["url:" + _hostless(snap.final_url)]
    if (
        snap.canonical_url
        and urlsplit(snap.canonical_url).hostname == urlsplit(snap.final_url).hostname
    ):
        keys.append("url:" + _hostless(snap.canonical_url))
    if snap.doi:
        keys.append("doi:" + snap.doi.lower())
    if snap.arxiv_id:
        keys.append("arxiv:" + snap.arxiv_id)
    text = normalise(snap.text)
    if len(text) > 200:
        keys.append("text:" + sha256_hex(text.encode())[:20])
    return keys


def minhash(text: str, num_perm: int = 128, shingle: int = 3) -> MinHash:
    """MinHash of a text's word shingles."""
    words = tokens(text)
    m = MinHash(num_perm=num_perm)
    for i in range(max(1, len(words) - shingle + 1)):
        m.update(" ".join(words[i : i + shingle]).encode("utf-8"))
    return m


@dataclass(frozen=True)
class MergeDecision:
    """One group of copies: its members, the origin chosen (if any), on what basis, how sure."""

    members: tuple[str, ...]
    origin: str | None
    basis: str
    confidence: float
    decided_by: str
    """code | model | analyst (undecided: left to the analyst)"""
    similarity: float = 0.0


@dataclass
class MergeResult:
    """The merge stage's artifact: document identities, copy groups and each source's status."""

    same_document: dict[str, str] = field(default_factory=dict)
    """source id -> the id of the source it is the same document as (kept once)"""
    decisions: list[MergeDecision] = field(default_factory=list)
    independence: dict[str, Independence] = field(default_factory=dict)
    origin_of: dict[str, str] = field(default_factory=dict)
    source_type: dict[str, SourceType] = field(default_factory=dict)
    by_origin: list[MergeDecision] = field(default_factory=list)
    """groups of cards (ids) that name one origin in their text, decided by code"""
    undecided: list[MergeDecision] = field(default_factory=list)
    """groups of cards (ids) that quote one figure without naming its source: for the analyst"""
    card_origin: dict[str, str] = field(default_factory=dict)
    """card id -> the origin it restates or is (`origin:` + the origin's name)"""


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def _issuer_page(snap: Snapshot) -> bool:
    """A page carrying a document number whose issuer prefix is the page's own host."""
    if not snap.doc_number:
        return False
    issuer = re.split(r"[^A-Za-z]", snap.doc_number, maxsplit=1)[0].lower()
    host = (urlsplit(snap.final_url).hostname or "").lower()
    return bool(issuer) and issuer in re.split(r"[.\-]", host)


def merge_sources(
    snapshots: Sequence[Snapshot],
    library_sources: Sequence[str],
    *,
    threshold: float,
    min_confidence: float,
    same_story: SameStoryFn | None = None,
) -> MergeResult:
    """Decide identity, copies, origins and independence for every source of a run."""
    result = MergeResult()
    by_key: dict[str, str] = {}
    unique: list[Snapshot] = []
    for snap in sorted(snapshots, key=lambda s: (s.fetched_at, s.id)):
        same = next((by_key[k] for k in identity_keys(snap) if k in by_key), None)
        if same is not None:
            result.same_document[snap.id] = same
            continue
        for key in identity_keys(snap):
            by_key[key] = snap.id
        unique.append(snap)
    hashes = {s.id: minhash(s.text) for s in unique}
    lsh = MinHashLSH(threshold=threshold, num_perm=128)
    for sid, mh in hashes.items():
        lsh.insert(sid, mh)
    groups = _Union()
    for sid, mh in hashes.items():
        for other in lsh.query(mh):
            if other != sid and hashes[sid].jaccard(hashes[other]) >= threshold:
                groups.union(sid, other)
    members: dict[str, list[Snapshot]] = {}
    for snap in unique:
        members.setdefault(groups.find(snap.id), []).append(snap)
    issuers = {s.doc_number for s in unique if _issuer_page(s)}
    for snap in unique:
        result.independence[snap.id] = "independent"
        # a page that declares a document number is that document, unless the number's
        # issuer publishes it on its own host: then only the issuer's page is
        primary = _issuer_page(snap) or (
            snap.doc_number is not None and snap.doc_number not in issuers
        )
        result.source_type[snap.id] = "primary" if primary else "unknown"
    for group in members.values():
        if len(group) > 1:
            _attribute(group, hashes, result, min_confidence, same_story)
    for sid, same in result.same_document.items():
        result.independence[sid] = "same_origin"
        result.origin_of[sid] = same
        result.source_type[sid] = result.source_type.get(same, "unknown")
    for sid in library_sources:
        result.independence.setdefault(sid, "independent")
        result.source_type.setdefault(sid, "primary")
    return result


def _attribute(
    group: list[Snapshot],
    hashes: dict[str, MinHash],
    result: MergeResult,
    min_confidence: float,
    same_story: SameStoryFn | None,
) -> None:
    ids = tuple(sorted(s.id for s in group))
    urls = {_hostless(s.final_url): s for s in group}
    linked = [
        urls[_hostless(link)]
        for s in group
        for link in s.links
        if _hostless(link) in urls and urls[_hostless(link)].id != s.id
    ]
    similarity = min(hashes[a].jaccard(hashes[b]) for a in ids for b in ids if a < b)
    origin: Snapshot | None = None
    basis, confidence, by = "undecided", 0.0, "analyst"
    if linked and len({s.id for s in linked}) == 1:
        origin, basis, confidence, by = linked[0], "credited by a copy's link", 0.95, "code"
    else:
        dated = sorted((s for s in group if s.published_at), key=lambda s: s.published_at or "")
        first = dated[0] if dated else None
        if first is not None and same_story is not None:
            others = [s for s in group if s.id != first.id]
            try:
                confidence = round(min(same_story(first, other) for other in others), 3)
                if confidence >= min_confidence:
                    origin, basis, by = (
                        first,
                        "earliest date; the judge model finds one story",
                        "model",
                    )
                else:
                    basis = f"earliest date, but the model is only {confidence:.2f} sure it is one story"
            except (BudgetExceeded, ModelError) as exc:
                basis = f"undecided: the attribution call was not made ({exc})"
    result.decisions.append(MergeDecision(ids, origin.id if origin else None, basis, confidence, by,
                                          round(similarity, 3)))  # fmt: skip
    for s in group:
        if origin is None:
            result.independence[s.id] = "unconfirmed"
        elif s.id == origin.id:
            result.independence[s.id] = "independent"
        else:
            result.independence[s.id] = "same_origin"
            result.origin_of[s.id] = origin.id
            result.source_type[s.id] = "reprint"


@dataclass
class _OriginGroup:
    mention: OriginMention
    restating: list[EvidenceCard] = field(default_factory=list)
    own: list[EvidenceCard] = field(default_factory=list)
    """cards whose text names no origin, from a source titled with this origin's name"""


def _origin_groups(cards: Sequence[EvidenceCard]) -> list[_OriginGroup]:
    """Cards grouped by an origin their text names, or, for a card naming none, by its source
    being an origin another card names."""
    groups: list[_OriginGroup] = []
    for card in cards:
        for m in origin_mentions(card.snippet):
            group = next((g for g in groups if same_origin(g.mention, m)), None)
            if group is None:
                groups.append(_OriginGroup(m, [card]))
            elif card not in group.restating:
                group.restating.append(card)
    named = {c.id for g in groups for c in g.restating}
    for card in cards:
        own = next((g for g in groups if names_itself(card, g.mention)), None)
        if card.id not in named and own is not None:
            own.own.append(card)
    return groups


def attribute_origins(cards: Sequence[EvidenceCard], merge: MergeResult) -> list[EvidenceCard]:
    """Cards attributed by the origins their text names (module docstring, step 4). This only
    ever lowers a card's independence: a copy found by the merge stays a copy."""
    updated = {c.id: c for c in cards}
    for g in _origin_groups(cards):
        group = g.own + g.restating
        sources = {c.source_id for c in group}
        figures = [figures_in(c.snippet) for c in group]
        quoted = any(shared_figure(figures[i], figures[j]) for i in range(len(group))
                     for j in range(i + 1, len(group)) if group[i].source_id != group[j].source_id)  # fmt: skip
        confidence = 0.95 if quoted else 0.85
        others = len(sources) - 1
        key = "origin:" + " ".join(sorted(g.mention.key))
        members = tuple(sorted(c.id for c in group))
        merge.by_origin.append(MergeDecision(members, g.own[0].id if g.own else None,
                                             f"the text names {g.mention.label}", confidence, "code"))  # fmt: skip
        for c in group:
            merge.card_origin.setdefault(c.id, key)
            now = updated[c.id]
            is_own = c in g.own
            basis = (f"the origin's own publication ({g.mention.label})" if is_own else
                     f"the text attributes it to {g.mention.label}")  # fmt: skip
            if others:
                basis += f"; {others} other source(s) name the same origin" + (
                    ", quoting the same figure" if quoted else "")  # fmt: skip
            if now.attribution_basis and now.independence != "independent":
                basis = f"{now.attribution_basis}; {basis}"
            independence = now.independence if is_own else "same_origin"
            if now.independence == "unconfirmed" and not is_own:
                independence = "unconfirmed"
            updated[c.id] = replace(
                now, origin_candidates=tuple(dict.fromkeys((g.mention.label, *now.origin_candidates))),
                attribution_basis=basis, attribution_confidence=confidence, independence=independence,
                source_type=("primary" if now.source_type != "reprint" else "reprint") if is_own
                else ("secondary" if now.source_type != "reprint" else "reprint"),
            )  # fmt: skip
    _undecided(list(updated.values()), merge, updated)
    return [updated[c.id] for c in cards]


def _undecided(
    cards: list[EvidenceCard], merge: MergeResult, updated: dict[str, EvidenceCard]
) -> None:
    """Cards of different sources quoting one figure, none naming where it comes from."""
    loose = [
        c for c in cards if c.id not in merge.card_origin and c.source_id not in merge.origin_of
    ]
    figs = {c.id: figures_in(c.snippet) for c in loose}
    seen: set[str] = set()
    for i, a in enumerate(loose):
        if a.id in seen or not figs[a.id]:
            continue
        group = [a] + [b for b in loose[i + 1:] if b.source_id != a.source_id and b.id not in seen
                       and shared_figure(figs[a.id], figs[b.id])]  # fmt: skip
        if len(group) < 2:
            continue
        seen |= {c.id for c in group}
        members = tuple(sorted(c.id for c in group))
        basis = "quotes the same figure as another source without naming where it comes from: a shared origin is possible"
        merge.undecided.append(MergeDecision(members, None, basis, 0.5, "analyst"))
        for c in group:
            updated[c.id] = replace(updated[c.id], independence="unconfirmed",
                                    attribution_basis=basis, attribution_confidence=0.5)  # fmt: skip


def merge_from_plain(data: Mapping[str, Any] | None) -> MergeResult:
    """The merge stage's artifact read back; a card's named origin is rebuilt from the groups
    naming one origin (the first group that holds it, as `attribute_origins` assigns it)."""
    if not data:
        return MergeResult()

    def groups(key: str) -> list[MergeDecision]:
        return [from_plain(MergeDecision, d) for d in data.get(key) or ()]

    result = MergeResult(
        same_document=dict(data.get("same_document") or {}), decisions=groups("decisions"),
        independence=dict(data.get("independence") or {}), origin_of=dict(data.get("origin_of") or {}),
        source_type=dict(data.get("source_type") or {}), by_origin=groups("by_origin"),
        undecided=groups("undecided"),
    )  # fmt: skip
    for n, d in enumerate(result.by_origin):
        for m in d.members:
            result.card_origin.setdefault(m, f"origin:#{n}")
    return result


def origin_key(card: EvidenceCard, merge: MergeResult) -> str:
    """What a card rests on: the origin its text names, else its source's origin (or itself)."""
    return merge.card_origin.get(card.id) or merge.origin_of.get(card.source_id, card.source_id)


def apply_merge(cards: Sequence[EvidenceCard], merge: MergeResult) -> list[EvidenceCard]:
    """Cards with their source's independence, origin candidates, basis and source type, then
    attributed by the origins their text names (`attribute_origins`)."""
    decision_of = {m: d for d in merge.decisions for m in d.members}
    out = []
    for card in cards:
        sid = card.source_id
        d = decision_of.get(sid)
        origin = merge.origin_of.get(sid)
        out.append(
            replace(
                card,
                independence=merge.independence.get(sid, "unconfirmed"),
                source_type=merge.source_type.get(sid, card.source_type),
                origin_candidates=tuple(m for m in d.members if m != sid) if d else (
                    (origin,) if origin else ()),
                attribution_basis=(d.basis if d else ("same document" if origin else
                                   "no copy of it found among the sources")),
                attribution_confidence=d.confidence if d else 1.0,
            )
        )  # fmt: skip
    return attribute_origins(out, merge)


def independent_origins(cards: Sequence[EvidenceCard], merge: MergeResult) -> int:
    """How many independent origins these cards rest on: a copy counts as its origin, and a
    group whose origin is undecided counts once however many of its members are cited."""
    groups = {m: d.members for d in merge.decisions for m in d.members}
    loose = {m: d.members for d in merge.undecided for m in d.members}
    keys: set[tuple[str, tuple[str, ...]]] = set()
    for c in cards:
        sid = c.source_id
        if c.id in merge.card_origin:
            keys.add(("origin", (merge.card_origin[c.id],)))
        elif c.id in loose:
            keys.add(("figure", loose[c.id]))
        elif c.independence == "unconfirmed":
            keys.add(("group", groups.get(sid, (sid,))))
        else:
            keys.add(("origin", (merge.origin_of.get(sid, sid),)))
    return len(keys)
