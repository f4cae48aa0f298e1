"""How joining a paragraph's lines scales: hostile text at 16k and 160k letters, in one run.

Each input is timed at n and 10·n letters; the ratio of the two times is printed beside 10,
the ratio a linear algorithm gives (an unanchored regex over the growing paragraph gave ~26
for 4× the letters). Inputs: (1) `join_lines` over 8-letter lines with no spaces; (2) the
same ending in hyphens; (3) a .txt of lower-case paragraphs that continue each other (the
continuation merge); (4) a .txt that is one paragraph of such lines. The baseline in the same
run is `str.join` over the same lines.
Usage: python bench/ingest_joining.py
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from footnote.config import IngestSettings
from footnote.ingest import parse_file
from footnote.ingest.cleanup import join_lines

SETTINGS = IngestSettings(workers=1)


def _time(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _txt(folder: Path, name: str, text: str) -> Callable[[], object]:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return lambda: parse_file(path, SETTINGS)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases: dict[str, Callable[[int], Callable[[], object]]] = {
            "str.join (baseline)": lambda n: lambda: " ".join(["abcdefgh"] * (n // 8)),
            "join_lines, letters": lambda n: lambda: join_lines(["abcdefgh"] * (n // 8)),
            "join_lines, hyphens": lambda n: lambda: join_lines(["abcdefg-"] * (n // 8)),
            ".txt continuations": lambda n: _txt(
                folder, f"c{n}.txt", "\n\n".join(f"w{i:07d}" for i in range(n // 8))
            ),
            ".txt one paragraph": lambda n: _txt(
                folder, f"p{n}.txt", "\n".join(f"w{i:07d}" for i in range(n // 8))
            ),
        }
        print(
            f"{'input':24} {'16k letters s':>14} {'160k letters s':>15} {'ratio':>7} {'linear':>7}"
        )
        for name, make in cases.items():
            small, large = _time(make(16_000)), _time(make(160_000))
            print(f"{name:24} {small:14.4f} {large:15.4f} {large / small:7.1f} {10:7d}")


if __name__ == "__main__":
    main()
