"""Coverage-guided fuzzing targets for atheris (run by test_parser_fuzz.py in a subprocess:
libFuzzer owns the process). `FUZZ_TARGET` picks the reader; a crash is any exception other
than the typed ones, and makes libFuzzer exit non-zero with the input that caused it."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path

import atheris
import lxml.html  # noqa: F401 - the libraries load uninstrumented (instrumenting them is slow)
import pdfplumber  # noqa: F401
import pypdfium2  # noqa: F401
import trafilatura  # noqa: F401

with atheris.instrument_imports(include=["footnote"]):
    from footnote.config import IngestSettings
    from footnote.errors import IngestError
    from footnote.ingest import parse_file
    from footnote.verify.cypher.parse import CypherSyntaxError, scan

TARGET = os.environ.get("FUZZ_TARGET", "text")
SUFFIX = {"text": ".txt", "html": ".html", "markdown": ".md", "pdf": ".pdf"}
SETTINGS = IngestSettings(max_pages=3)
TMP = Path(tempfile.mkdtemp())


def one(data: bytes) -> None:
    if TARGET == "cypher":
        with contextlib.suppress(CypherSyntaxError, ValueError):
            scan(data.decode("utf-8", "replace"))
        return
    path = TMP / f"input{SUFFIX[TARGET]}"
    path.write_bytes(data)
    with contextlib.suppress(IngestError):
        parse_file(path, SETTINGS)


if __name__ == "__main__":
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()
