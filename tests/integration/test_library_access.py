"""Who owns a source and who it is shared with, over HTTP (real SQLite, real ingest, the
wordllama embedder): each source says its owner, the groups it is shared with and whether the
caller may delete it; the accepted formats are one list, in the API and in its errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from footnote.ingest import formats_text
from footnote.server import create_app
from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = pytest.mark.integration


def _doc(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"# {text}\n\n{text} is described here in a paragraph of its own.\n")
    return path


def test_the_library_says_who_owns_a_source_and_who_may_delete_it(tmp_path: Path) -> None:
    ws = Workspace.open(
        tmp_path / "ws", overrides={"models": {"embed": {"url": "local:wordllama"}}}
    )
    alice = {"X-API-Key": ws.auth.add_key("alice", ("lab",))}
    bob = {"X-API-Key": ws.auth.add_key("bob", ("lab",))}
    ws.ingest([_doc(tmp_path / "a", "shared.md", "Shared notes")], owner="alice",
              acl_groups=("lab",))  # fmt: skip
    ws.ingest([_doc(tmp_path / "b", "private.md", "Private notes")], owner="alice")
    ws.ingest([_doc(tmp_path / "c", "public.md", "Public notes")], public=True)
    with TestClient(create_app(ws, ServerDeps(use_models=False)),
                    base_url="http://127.0.0.1") as c:  # fmt: skip
        mine = {s["filename"]: s for s in c.get("/v1/sources", headers=alice).json()}
        assert set(mine) == {"shared.md", "private.md", "public.md"}
        assert mine["shared.md"]["owner"] == "alice" and mine["shared.md"]["shared_with"] == ["lab"]
        assert mine["private.md"]["shared_with"] == [] and not mine["private.md"]["public"]
        assert mine["public.md"]["public"] and mine["public.md"]["owner"] is None
        assert {n for n, s in mine.items() if s["can_delete"]} == {"shared.md", "private.md"}
        theirs = {s["filename"]: s for s in c.get("/v1/sources", headers=bob).json()}
        assert set(theirs) == {"shared.md", "public.md"}  # the private one stays private
        assert not any(s["can_delete"] for s in theirs.values())
        one = c.get(f"/v1/sources/{mine['shared.md']['id']}", headers=bob).json()
        assert one["owner"] == "alice" and one["can_delete"] is False
        assert c.delete(f"/v1/sources/{one['id']}", headers=bob).status_code == 403
        # one list of formats: the API's, the 415's and the parser's are the same words
        formats = c.get("/v1/sources/formats", headers=bob).json()
        names = [f["name"] for f in formats]
        assert {"PDF", "Word", "PowerPoint", "Excel", "EPUB", "LaTeX"} <= set(names)
        assert any(".docx" in f["suffixes"] for f in formats)
        refused = c.post("/v1/sources", headers=bob,
                         files={"file": ("figure.png", b"\x89PNG\r\n", "image/png")})  # fmt: skip
        assert refused.status_code == 415
        assert formats_text() in refused.json()["error"]["message"]
    ws.close()
