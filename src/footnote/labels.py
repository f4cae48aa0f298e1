"""Source labels as stored: one spelling per label, and no licence label mistyped into a free
one that no gate would read (`normalise_labels`, applied wherever labels enter: ingestion by
the CLI, the Python API, uploads over HTTP and the ingest job)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from footnote.errors import UsageError

DECLARED_LABELS: tuple[str, ...] = ("no-external-model", "client-confidential", "internal")
"""The labels a rule acts on (the licence gate, export readers, research); every other label
is free text, kept normalised."""
_LICENCE_WORDS = ("external", "confidential", "licence", "license")


def _squash(label: str) -> str:
    return re.sub(r"[^0-9a-z]", "", label)


def normalise_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """Labels as stored: lower case, words joined by `-` (`No_External Model` →
    `no-external-model`), duplicates dropped. A label spelt like a declared one is that label;
    an unknown label that looks like a licence or confidentiality label (a near miss, or one
    naming `external`, `confidential`, `licence`) is a `UsageError`, never silently free text
    that no gate would read."""
    out: list[str] = []
    for raw in labels:
        label = re.sub(r"[\s_.]+", "-", raw.strip().lower()).strip("-")
        label = re.sub(r"-{2,}", "-", label)
        if not label:
            continue
        declared = next((d for d in DECLARED_LABELS if _squash(d) == _squash(label)), None)
        if declared is None:
            words = set(label.split("-"))
            near = difflib.get_close_matches(label, DECLARED_LABELS, n=1, cutoff=0.75)
            if near or any(w.startswith(_LICENCE_WORDS) for w in words):
                hint = f"; did you mean {near[0]}?" if near else ""
                raise UsageError(
                    f"unknown label {raw!r}: a label that restricts models or readers must be "
                    f"one of {', '.join(DECLARED_LABELS)}{hint}"
                )
        out.append(declared or label)
    return tuple(dict.fromkeys(out))
