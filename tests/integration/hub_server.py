"""A loopback server that speaks the Hugging Face hub's file API for one repository: the
tree listing, `resolve` with HEAD (commit, LFS etag = sha256, size) and ranged GET."""

from __future__ import annotations

import hashlib
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.responses import FileResponse, JSONResponse

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def hub_app(repo: str, files: dict[str, Path]) -> FastAPI:
    """Serve `files` (name -> path on disk) as repository `repo` at revision main."""
    app = FastAPI()
    digests = {name: sha256_of(path) for name, path in files.items()}
    app.state.downloads = []

    @app.get("/api/models/{owner}/{name}/tree/{revision}")
    def tree(owner: str, name: str, revision: str) -> Response:
        if f"{owner}/{name}" != repo:
            return JSONResponse({"error": "Repository not found"}, status_code=404,
                                headers={"X-Error-Code": "RepoNotFound"})  # fmt: skip
        return JSONResponse([
            {"type": "file", "path": f, "size": p.stat().st_size, "oid": digests[f][:40],
             "lfs": {"oid": digests[f], "size": p.stat().st_size, "pointerSize": 134}}
            for f, p in files.items()
        ])  # fmt: skip

    @app.api_route("/{owner}/{name}/resolve/{revision}/{filename}", methods=["GET", "HEAD"])
    def resolve(owner: str, name: str, revision: str, filename: str, request: Request) -> Response:
        if f"{owner}/{name}" != repo or filename not in files:
            return JSONResponse({"error": "Entry not found"}, status_code=404,
                                headers={"X-Error-Code": "EntryNotFound"})  # fmt: skip
        path = files[filename]
        headers = {
            "X-Repo-Commit": COMMIT,
            "X-Linked-Etag": f'"{digests[filename]}"',
            "ETag": f'"{digests[filename]}"',
            "X-Linked-Size": str(path.stat().st_size),
            "Accept-Ranges": "bytes",
        }
        if request.method == "HEAD":
            return Response(headers={**headers, "Content-Length": str(path.stat().st_size)})
        app.state.downloads.append(filename)
        return FileResponse(path, headers=headers)

    return app
