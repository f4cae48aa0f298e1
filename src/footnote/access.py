"""Who may read, share and delete a source, and what labelled text may leave: the one home of
the visibility and label rules every route, tool, cache, index filter and export follows."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from footnote.types import Source, sha256_hex

PERSONAL_PREFIX = "user:"
"""Group names starting with this are personal: `user:<id>` has exactly one member."""


def personal_group(user_id: str) -> str:
    """The group only `user_id` belongs to; every keyed user's groups include it."""
    return f"{PERSONAL_PREFIX}{user_id}"


def readable_by(source: Source, user_groups: tuple[str, ...] | None) -> bool:
    """The visibility rule (the one every route, tool, cache and index filter follows).

    `None` groups are unrestricted (the local user, an admin); a source with no ACL groups is
    public; any other source is readable when the groups intersect. Ownership is part of it:
    a keyed user's groups include their personal group, and an owned source that is not
    public always names its owner's personal group (`owned_acl`), so the owner keeps reading
    it whatever groups they are moved between."""
    groups = source.acl_groups
    return user_groups is None or not groups or bool(set(groups) & set(user_groups))


def shown_source(source: Source, user_groups: tuple[str, ...] | None) -> Source:
    """The source as a caller may see it: unrestricted callers (the local user, an admin) get
    its whole `uri`; others the file name only (a web source keeps its URL): no server path."""
    if user_groups is None or "://" in source.uri:
        return source
    return replace(source, uri=re.split(r"[\\/]", source.uri)[-1])


RESTRICTED_LABELS: dict[str, tuple[str, ...]] = {"client-confidential": ()}
"""Labels whose text leaves the system (exports, the exporter's view) only for some readers;
the default of `export.label_readers`."""


def label_refusal(
    labels: Sequence[str],
    user_groups: tuple[str, ...] | None,
    source_groups: Sequence[str] = (),
    readers: Mapping[str, Sequence[str]] = RESTRICTED_LABELS,
) -> str | None:
    """Why text carrying `labels` may not go out to this user, or None (the one label rule).
    A restricted label admits the groups `readers` names for it plus the groups of the text's
    own source; fetched text has no source groups. Unrestricted users (`None`) read all."""
    if user_groups is None:
        return None
    for label in labels:
        if label in readers:
            allowed = set(readers[label]) | set(source_groups)
            if not allowed & set(user_groups):
                return f"labelled {label}: readable only by " + (
                    ", ".join(sorted(allowed)) or "unrestricted users"
                )
    return None


def owned_acl(owner: str, groups: tuple[str, ...], *, public: bool = False) -> tuple[str, ...]:
    """The ACL of a source `owner` adds: `()` when public (or no owner), else the groups plus
    the owner's personal group (a private source: the personal group alone)."""
    if public or not owner:
        return () if public else groups
    return tuple(dict.fromkeys([*groups, personal_group(owner)]))


def shared_with(source: Source) -> tuple[str, ...]:
    """The groups a source is shared with besides its owner: its ACL less the owner's personal
    group (empty for a private source, and for a public one, which has no ACL)."""
    mine = personal_group(source.owner) if source.owner else None
    return tuple(g for g in source.acl_groups if g != mine)


def deletable_by(source: Source, user_id: str, *, admin: bool) -> bool:
    """Only the owner or an admin deletes (operator sources, with no owner: admins only)."""
    return admin or (bool(source.owner) and source.owner == user_id)


def scoped_source_id(
    sha: str, owner: str, acl_groups: tuple[str, ...], labels: tuple[str, ...]
) -> str:
    """The id of the record a file gets: `sha[:12]` for the operator; for an owner, a hash of
    the bytes, owner, ACL and labels, so deduplication never crosses visibility: the same
    bytes uploaded by two users (or with two ACLs) are two records."""
    if not owner:
        return sha[:12]
    key = "\x1f".join([sha, owner, ",".join(sorted(acl_groups)), ",".join(sorted(labels))])
    return sha256_hex(key.encode("utf-8"))[:12]
