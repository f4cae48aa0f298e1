"""Caps for the zip-based formats (DOCX, PPTX, XLSX, EPUB), so that one hostile file cannot
hold a worker for minutes: the archive's directory is checked before any part is unpacked
(`ingest.max_zip_entries`, `ingest.max_unpacked_mb`, `ingest.max_unpack_ratio`), and the
parsers count the elements they walk (`ingest.max_elements`). The sizes checked are the ones
the zip directory declares; `zipfile` never unpacks a part past its declared size (a part
that holds more fails its CRC check), so a lying directory gains nothing.
"""

from __future__ import annotations

import io
import zipfile

from footnote.config import IngestSettings
from footnote.errors import UnsupportedInput

_MIB = 1024 * 1024
RATIO_FLOOR = _MIB
"""Parts that unpack to less than this are not held to `ingest.max_unpack_ratio`."""


def check_archive(data: bytes, name: str, settings: IngestSettings) -> None:
    """Refuse an archive with too many parts, too many unpacked bytes, or a part packed far
    tighter than documents are (a zip bomb)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as book:
            infos = book.infolist()
    except (zipfile.BadZipFile, ValueError, OSError):
        raise UnsupportedInput(f"{name}: not a valid zip archive", path=name) from None
    if len(infos) > settings.max_zip_entries:
        raise UnsupportedInput(
            f"{name}: {len(infos)} parts is over the limit of {settings.max_zip_entries} "
            "(ingest.max_zip_entries)",
            path=name,
        )
    total = 0
    for info in infos:
        total += info.file_size
        ratio = info.file_size / max(info.compress_size, 1)
        if info.file_size > RATIO_FLOOR and ratio > settings.max_unpack_ratio:
            raise UnsupportedInput(
                f"{name}: part {info.filename!r} unpacks to {info.file_size / _MIB:.1f} MiB, "
                f"{ratio:.0f} times its packed size, over the limit of "
                f"{settings.max_unpack_ratio:g} (ingest.max_unpack_ratio): a zip bomb?",
                path=name,
            )
    if total > settings.max_unpacked_mb * _MIB:
        raise UnsupportedInput(
            f"{name}: unpacks to {total / _MIB:.1f} MiB, over the limit of "
            f"{settings.max_unpacked_mb:g} MiB (ingest.max_unpacked_mb)",
            path=name,
        )


class ElementBudget:
    """Counts the elements (paragraphs, table cells, shapes, sheet cells, chapters) a parser
    walks; one past `ingest.max_elements` refuses the file."""

    def __init__(self, name: str, limit: int) -> None:
        self.name, self.limit, self.count = name, limit, 0

    def take(self, n: int = 1) -> None:
        """Count `n` more elements."""
        self.count += n
        if self.count > self.limit:
            raise UnsupportedInput(
                f"{self.name}: more than {self.limit} paragraphs, cells or other elements "
                "(ingest.max_elements)",
                path=self.name,
            )
