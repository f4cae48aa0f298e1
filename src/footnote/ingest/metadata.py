"""Bibliographic metadata: title, authors, published date, DOI and arXiv id, from a PDF's Info
dictionary and first page, HTML `<meta>` tags, or a format's own properties."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from footnote.ingest.cleanup import clean_text
from footnote.textnorm import CJK_IDEOGRAPHS

DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;:)\]])")
ARXIV = re.compile(
    r"(?:arXiv:\s*|arxiv\.org/(?:abs|pdf)/)(\d{4}\.\d{4,5}(?:v\d+)?|[a-z\-]+(?:\.[A-Z]{2})?/\d{7})",
    re.I,
)
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ]
    )
    for m in names
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATES = [
    re.compile(r"(?P<y>1[5-9]\d\d|20\d\d)([-/.])(?P<m>\d\d)(?:\2(?P<d>\d\d))?"),
    re.compile(r"(?P<y>(?:19|20)\d\d)年(?P<m>\d{1,2})月(?:(?P<d>\d{1,2})日)?"),
    re.compile(rf"(?P<d>\d{{1,2}})\s+(?P<mn>{_MONTH_RE})\.?,?\s+(?P<y>(?:19|20)\d\d)", re.I),
    re.compile(rf"(?P<mn>{_MONTH_RE})\.?\s+(?:(?P<d>\d{{1,2}}),?\s+)?(?P<y>(?:19|20)\d\d)", re.I),
]
_PUBLISHED = re.compile(
    r"(?:published(?: online)?|accepted|received|date|发布日期|发表日期|日期)\s*[:：]?\s*(.{6,40})",
    re.I,
)
_NOT_A_NAME = re.compile(
    r"@|\d|https?:|univ|institut|department|dept\.|school|college|laborator|lab\b|research|"
    r"center|centre|inc\.|ltd|corp|allen|google|microsoft|abstract|bulletin|journal|program|"
    r"press|proceedings|conference|usa\b|china\b|大学|学院|研究",
    re.I,
)
_NAME = re.compile(r"^[A-Z][\w'’.\-]*(?:\s+(?:[A-Z][\w'’.\-]*|van|von|de|der|da|di|le|la)){1,4}$")
_CN_NAME = re.compile(rf"^[{CJK_IDEOGRAPHS}]{{2,4}}$")


@dataclass
class Meta:
    """What a document says about itself; empty fields are unknown."""

    title: str = ""
    authors: list[str] = field(default_factory=list)
    published_at: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None

    def fill(self, other: Meta) -> Meta:
        """This metadata with its empty fields taken from `other`."""
        return Meta(
            self.title or other.title,
            self.authors or other.authors,
            self.published_at or other.published_at,
            self.doi or other.doi,
            self.arxiv_id or other.arxiv_id,
        )


def iso_date(text: str) -> str | None:
    """The first date in `text` as YYYY, YYYY-MM or YYYY-MM-DD (PDF `D:2020…` dates too)."""
    text = text.strip()
    m = re.match(r"^D:((?:19|20)\d\d)(\d\d)?(\d\d)?", text)
    if m:
        return "-".join(p for p in m.groups() if p)
    for pattern in _DATES:
        found = pattern.search(text)
        if not found:
            continue
        parts = found.groupdict()
        month = int(parts["m"]) if parts.get("m") else _MONTHS[parts["mn"].lower().rstrip(".")]
        if not 1 <= month <= 12:
            continue
        day = int(parts["d"]) if parts.get("d") else None
        if day is not None and not 1 <= day <= 31:
            day = None
        out = f"{parts['y']}-{month:02d}"
        return f"{out}-{day:02d}" if day else out
    m2 = re.search(r"\b((?:19|20)\d\d)\b", text)
    return m2.group(1) if m2 else None


def split_authors(text: str) -> list[str]:
    """Names from an author line: split at ';', ',', ' and ', '&', wide gaps; marks dropped."""
    text = re.sub(r"[*†‡§¶⋆∗♠♣♥♦#α-ω]|\^?\{?\d+\}?(?=[\s,;]|$)", " ", clean_text(text))
    parts = re.split(r"\s*(?:;|,|\band\b|&|\s{2,}|、|，)\s*", text)
    names = []
    for part in parts:
        name = " ".join(part.split()).strip(" .")
        if name and (_NAME.match(name) or _CN_NAME.match(name)) and not _NOT_A_NAME.search(name):
            names.append(name)
    return list(dict.fromkeys(names))


def from_pdf_info(info: Mapping[str, str]) -> Meta:
    """Authors and creation date from a PDF Info dictionary (the title is vetted elsewhere)."""
    author = clean_text(str(info.get("Author", "")))
    authors = split_authors(author) if author and not author.startswith("<") else []
    date = iso_date(str(info.get("CreationDate", ""))) if info.get("CreationDate") else None
    return Meta(authors=authors, published_at=date)


def from_text(first_page: str, front: Iterable[str] = ()) -> Meta:
    """DOI, arXiv id, an explicit publication date and (from `front`, the lines between the
    title and the first section) the authors, read off a document's first page."""
    doi = DOI.search(first_page)
    arxiv = ARXIV.search(first_page)
    date = None
    for m in _PUBLISHED.finditer(first_page):
        date = iso_date(m.group(1))
        if date:
            break
    if date is None and arxiv:
        stamp = re.search(rf"{re.escape(arxiv.group(0))}.{{0,40}}", first_page)
        date = iso_date(stamp.group(0)) if stamp else None
    authors: list[str] = []
    for line in front:
        found = split_authors(line)
        if len(found) >= max(1, len(line.split()) // 6):
            authors += found
    return Meta(
        authors=list(dict.fromkeys(authors))[:50],
        published_at=date,
        doi=doi.group(1) if doi else None,
        arxiv_id=arxiv.group(1) if arxiv else None,
    )


def from_html_meta(tags: Mapping[str, list[str]]) -> Meta:
    """Highwire `citation_*`, Dublin Core, OpenGraph/article and plain `author` meta tags
    (names lower-cased, each with its values in page order)."""

    def first(*names: str) -> str:
        return next((clean_text(tags[n][0]) for n in names if tags.get(n)), "")

    authors = [clean_text(a) for a in tags.get("citation_author", []) if clean_text(a)]
    if not authors:
        for name in ("dc.creator", "dc.contributor", "author", "article:author"):
            authors = [a for v in tags.get(name, []) for a in split_authors(v)]
            if authors:
                break
    date = first(
        "citation_publication_date",
        "citation_date",
        "citation_online_date",
        "dc.date",
        "dc.date.issued",
        "article:published_time",
        "date",
    )
    doi = first("citation_doi", "dc.identifier", "prism.doi")
    arxiv = first("citation_arxiv_id")
    found_doi = DOI.search(doi) if doi else None
    return Meta(
        title=first("citation_title", "dc.title", "og:title"),
        authors=list(dict.fromkeys(authors)),
        published_at=iso_date(date) if date else None,
        doi=found_doi.group(1) if found_doi else None,
        arxiv_id=arxiv or None,
    )
