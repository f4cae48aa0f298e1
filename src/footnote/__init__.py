"""footnote: answers about papers where every sentence carries a checked footnote.

The Python API: `footnote.open(workspace)` returns a `Library` (see `footnote.workspace.api`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from footnote.workspace.api import Library

__version__ = "0.1.0"


def open(
    path: Path | str | None = None,
    *,
    user_id: str | None = None,
    groups: Sequence[str] | None = None,
    overrides: dict[str, Any] | None = None,
) -> Library:
    """Open (creating if needed) a workspace folder and return its `Library`.

    `groups=None` is the unrestricted local caller; give `user_id` and `groups` to see the
    workspace as an API user would (ACL-filtered). `overrides` are settings, e.g.
    `{"ask": {"mode": "extractive"}}`.
    """
    from footnote.workspace.api import Library

    return Library.open(path, user_id=user_id, groups=groups, overrides=overrides)


__all__ = ["__version__", "open"]
