"""Settings from the environment: `FOOTNOTE_<SECTION>__<FIELD>` (and `FOOTNOTE_WORKSPACE`)
name a field of the settings tree; a list field takes `a,b` or a JSON array. Any other
`FOOTNOTE_*` name is not a setting: the scripts' own are ignored, others with a warning."""

from __future__ import annotations

import json
import logging
from typing import Any, get_origin

from pydantic import BaseModel

from footnote.errors import ConfigError

log = logging.getLogger("footnote.config")
ENV_PREFIX = "FOOTNOTE_"


SCRIPT_VARIABLES = frozenset({"FOOTNOTE_NO_LLM", "FOOTNOTE_WHEEL_CACHE", "FOOTNOTE_SHARED_DATA"})
"""`FOOTNOTE_*` names read by scripts/ (setup, quickstart, the data checkers), not settings."""
_warned: set[str] = set()


def _env_field(path: list[str], root: type[BaseModel]) -> Any:
    """The pydantic field an env path names (None when it names no setting)."""
    model: type[BaseModel] = root
    info = None
    for i, part in enumerate(path):
        info = model.model_fields.get(part)
        if info is None:
            return None
        ann = info.annotation
        if i < len(path) - 1:
            if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
                return None
            model = ann
    return info


def _env_value(info: Any, value: str) -> Any:
    """A list setting accepts `a,b` or a JSON array; anything else is passed on as text."""
    if get_origin(info.annotation) in (tuple, list):
        text = value.strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError as exc:
                raise ConfigError(f"not a JSON array: {value!r} ({exc})") from exc
        return [v.strip() for v in text.split(",") if v.strip()]
    return value


def env_overrides(environ: dict[str, str], root: type[BaseModel]) -> dict[str, Any]:
    """Settings named by `FOOTNOTE_<SECTION>__<FIELD>` (or `FOOTNOTE_WORKSPACE`). Other
    `FOOTNOTE_*` names are not settings: the scripts' own are ignored, any other is ignored
    with a warning (a typo would otherwise pass unnoticed)."""
    tree: dict[str, Any] = {}
    for name, value in environ.items():
        if not name.startswith(ENV_PREFIX) or name in SCRIPT_VARIABLES:
            continue
        path = [p.lower() for p in name[len(ENV_PREFIX) :].split("__") if p]
        info = _env_field(path, root) if path else None
        if info is None:
            if name not in _warned:
                _warned.add(name)
                log.warning("ignoring %s: it names no setting (see `footnote config show`)", name)
            continue
        _set_path(tree, path, _env_value(info, value))
    return tree


def _set_path(tree: dict[str, Any], path: list[str], value: Any) -> None:
    node = tree
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
