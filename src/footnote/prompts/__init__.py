"""Prompts are package data: one Markdown file per prompt, `{name}` placeholders, loaded by name."""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources


@cache
def load_prompt(name: str) -> str:
    """The text of `prompts/<name>.md`."""
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def fill(template: str, values: dict[str, str]) -> str:
    """`template` with its `{placeholders}` filled in one pass: a value containing `{name}`
    stays as written (document text cannot pull in another value); other braces are left."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def render(name: str, **values: str) -> str:
    """A prompt with its `{placeholders}` filled (other braces are left alone)."""
    return fill(load_prompt(name), values)


def data_section(text: str, name: str = "DATA") -> str:
    """Untrusted text fenced for a prompt with a tag it cannot know: derived from a hash of the
    text itself, so text that tries to close the section changes the tag it would need (any copy
    of the tag inside is removed as well). Deterministic, so equal prompts stay equal (caches)."""
    tag = f"{name}-{hashlib.sha256(text.encode('utf-8')).hexdigest()[:12]}"
    body = text.replace(tag, "")
    return f"<<<{tag}\n{body}\n{tag}>>>"
