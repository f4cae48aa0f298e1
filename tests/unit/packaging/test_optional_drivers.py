"""The embedded install has no optional server drivers: a workspace opens, ingests and
searches with `psycopg`, `redis` and `weasyprint` unimportable (a clean `pip install footnote`
broke once because the search backends imported the PostgreSQL store unconditionally)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = textwrap.dedent(
    """
    import sys
    for name in ("psycopg", "psycopg_pool", "redis", "weasyprint"):
        sys.modules[name] = None  # `import name` now raises ImportError
    from pathlib import Path
    from footnote.workspace import Workspace
    root = Path(sys.argv[1])
    (root / "ws").mkdir()
    (root / "ws" / "config.toml").write_text(
        '[models.embed]\\nurl = "local:wordllama"\\n[ask]\\nmode = "extractive"\\n'
        'use_judge = false\\n', encoding="utf-8")
    paper = root / "paper.md"
    paper.write_text("# Study\\n\\nHybrid retrieval reached a recall of 0.74.\\n", encoding="utf-8")
    with Workspace.open(root / "ws") as ws:
        ws.ingest([paper])
        print(len(ws.searcher.search("hybrid retrieval recall")))
    """
)


def test_a_workspace_works_without_the_optional_drivers(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)],
        capture_output=True, text=True, timeout=300,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.strip().splitlines()[-1]) >= 1
