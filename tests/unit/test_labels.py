"""Labels are normalised, and an unknown licence-like label is refused (#31 finding 11):
`No-External-Model` and `no_external_model` were stored as given, so the licence gate (which
reads `no-external-model`) let an external embedder see the text."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from footnote.errors import UsageError
from footnote.labels import DECLARED_LABELS, normalise_labels
from footnote.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/openai_loopback.py
from openai_loopback import LoopbackServer, Response


def test_spellings_of_a_declared_label_are_that_label() -> None:
    for spelling in ("No-External-Model", "no_external_model", " NO EXTERNAL MODEL ",
                     "noExternalModel", "no--external--model"):  # fmt: skip
        assert normalise_labels([spelling]) == ("no-external-model",), spelling
    assert normalise_labels(["Client_Confidential", "INTERNAL"]) == (
        "client-confidential",
        "internal",
    )
    assert normalise_labels(["no-external-model", "No_External_Model"]) == ("no-external-model",)


def test_free_labels_stay_free_but_normalised() -> None:
    assert normalise_labels(["Project X", "red", "q3_2024", ""]) == ("project-x", "red", "q3-2024")


@pytest.mark.parametrize(
    "label", ["no-external-models", "no_externel_model", "external-ok", "Client Confidental",
              "licensed", "licence-restricted", "interal"],
)  # fmt: skip
def test_an_unknown_licence_like_label_is_refused_with_the_declared_set(label: str) -> None:
    with pytest.raises(UsageError) as exc:
        normalise_labels([label])
    message = str(exc.value)
    assert repr(label) in message and all(d in message for d in DECLARED_LABELS)


class _Recorder:
    """An OpenAI-compatible embeddings endpoint on loopback that records every request."""

    def __init__(self) -> None:
        self.server = LoopbackServer(
            lambda _path, _body: Response(500), model="embedder", models=False
        )
        self.url = self.server.url

    @property
    def bodies(self) -> list[bytes]:
        return [r.raw for r in self.server.requests]

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture()
def recorder() -> Iterator[_Recorder]:
    r = _Recorder()
    yield r
    r.stop()


@pytest.mark.parametrize("spelling", ["No-External-Model", "no_external_model"])
def test_a_respelt_licence_label_never_reaches_an_external_embedder(
    tmp_path: Path, recorder: _Recorder, spelling: str
) -> None:
    ws = Workspace.open(tmp_path / "ws", overrides={"models": {"embed": {"url": recorder.url}}})
    paper = tmp_path / "licensed.md"
    paper.write_text("# Licensed\n\nThe licensed corpus holds 9,800 tonnes of data.\n")
    try:
        report = ws.ingest([paper], labels=[spelling])
        assert report.results[0].outcome == "failed"
        assert "no-external-model" in (report.results[0].error or "")
        assert recorder.bodies == [] and ws.store.list_sources() == []
        with pytest.raises(UsageError, match="no-external-model"):
            ws.ingest([paper], labels=["no-external-models"])
        local = ws.ingest([paper], labels=[spelling], index=False).results[0]
        assert local.source is not None and local.source.labels == ("no-external-model",)
    finally:
        ws.close()
