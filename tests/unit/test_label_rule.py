"""The one label rule for text leaving the system (exports and the exporter's view)."""

from __future__ import annotations

from footnote.access import label_refusal


def test_a_restricted_label_admits_its_readers_and_the_sources_groups() -> None:
    readers = {"client-confidential": ("client-team",)}
    labels = ("client-confidential",)
    assert label_refusal(labels, ("client-team",), (), readers) is None
    assert label_refusal(labels, ("board",), ("board",), readers) is None  # the source's own group
    why = label_refusal(labels, ("staff",), ("board",), readers)
    assert why is not None and "board" in why and "client-team" in why


def test_fetched_text_with_a_restricted_label_goes_only_to_its_readers() -> None:
    assert label_refusal(("client-confidential",), ("staff",)) is not None  # default: nobody
    assert label_refusal(("client-confidential",), None) is None  # unrestricted user
    assert label_refusal(("public",), ("staff",)) is None  # not a restricted label
