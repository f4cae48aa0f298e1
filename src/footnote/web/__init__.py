"""The web app's built static files (L7), served at `/` by `footnote serve`.

The front-end source lives in `web/` at the repository root; `scripts/build-web` rebuilds
`static/` from its lockfile. The built files are committed, so a clone runs without npm.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""Folder holding `index.html` and `assets/`."""
