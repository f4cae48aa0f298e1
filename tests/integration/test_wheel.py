"""A wheel that works: built from the checkout, installed with pip into a clean virtualenv
outside it, `footnote demo` ingests the bundled papers and answers; the demo graphs say
where their (unbundled) data comes from; the Python API imports from the install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 1500) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}: {done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout + done.stderr


def test_wheel_in_a_clean_venv_runs_the_demo(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("FOOTNOTE_")}  # fmt: skip
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path / "dist"),
         str(ROOT)], tmp_path, env)  # fmt: skip
    wheel = next((tmp_path / "dist").glob("footnote-*.whl"))
    run([sys.executable, "-m", "venv", str(tmp_path / "venv")], tmp_path, env)
    bin_dir = tmp_path / "venv" / "bin"
    run([str(bin_dir / "pip"), "install", "-q", str(wheel)], tmp_path, env)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**env, "PATH": f"{bin_dir}:{env.get('PATH', '')}"}
    where = run([str(bin_dir / "python"), "-c",
                 "import footnote, footnote.examples as e; print(footnote.__file__); "
                 "print(e.PAPERS_DIR); print(callable(footnote.open))"], elsewhere, env)  # fmt: skip
    assert str(tmp_path / "venv") in where and str(ROOT) not in where and "True" in where
    out = run([str(bin_dir / "footnote"), "demo", "-w", str(elsewhere / "ws")], elsewhere, env)
    assert "added" in out and "5 Results" in out  # the bundled PDFs were parsed
    assert out.count("status answered") >= 2, out[-3000:]
    assert "status no_evidence" in out  # the question with no answer in the papers
    graph = subprocess.run(
        [str(bin_dir / "footnote"), "graph", "demo", "movies", "-w", str(elsewhere / "ws")],
        cwd=elsewhere, env={**env, "COLUMNS": "300"}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert graph.returncode == 0, graph.stderr  # the demo data ships in the wheel
    assert "Movie 38" in " ".join(graph.stdout.split())
