"""Place names across English and Chinese (`places.tsv`, package data): a stored value
"Germany" is met by "德国" and a stored "上海" by "Shanghai". The alias table adds each
translation of a stored name or value as an alias row of its own kind, so it aligns exactly
(`index.graph.aliases`). Places only: their renderings are fixed by usage, unlike people's
names, which go through sound keys (`translit`)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from footnote.textnorm import normalise


@cache
def _table() -> dict[str, tuple[str, ...]]:
    """normalised name → the place's names in the other language."""
    out: dict[str, tuple[str, ...]] = {}
    text = files("footnote.index.graph").joinpath("places.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        english, chinese = (side.split("|") for side in line.split("\t"))
        for name in english:
            out[normalise(name)] = tuple(chinese)
        for name in chinese:
            out[normalise(name)] = tuple(english)
    return out


def translations(name: str) -> tuple[str, ...]:
    """The names in the other language of the place `name` names (none when it names none)."""
    return _table().get(normalise(name), ())
