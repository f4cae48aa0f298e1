"""Settings of exports (`export.*`): who may take labelled evidence out of the system."""

from __future__ import annotations

from pydantic import Field

from footnote.config.base import _Section


def _restricted() -> dict[str, tuple[str, ...]]:
    return {"client-confidential": ()}


class ExportSettings(_Section):
    """Exports of briefs, answers and chat threads (Markdown, HTML, PDF, JSON, BibTeX, CSL)."""

    label_readers: dict[str, tuple[str, ...]] = Field(
        default_factory=_restricted,
        description="Restricted labels and the ACL groups that may export text carrying them; "
        "a card or citation with such a label is withheld (and the export says so) for any other "
        "user. Unrestricted callers (the local user, admins) export everything.",
    )
