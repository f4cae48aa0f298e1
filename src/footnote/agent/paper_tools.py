"""The scholarly search tool for the agent: `search_papers` over the configured providers
(OpenAlex, arXiv, Semantic Scholar). It returns metadata and abstracts to read, never citable
evidence: the agent's final answer still cites library blocks only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from footnote.agent.tools import ToolRegistry
from footnote.errors import FetchError, ToolRetry
from footnote.ingest.web.search import PaperSearch


def add_paper_tools(registry: ToolRegistry, providers: Sequence[PaperSearch]) -> None:
    """Register `search_papers` on `registry` when any scholarly provider is configured."""
    if not providers:
        return

    def search_papers(query: str, k: int = 5) -> list[dict[str, Any]]:
        """Search scholarly databases for papers: title, authors, year, DOI/arXiv id, abstract.

        Args:
            query: keywords of the topic or the paper's title.
            k: how many papers per database (1-10).
        """
        found: list[dict[str, Any]] = []
        errors = []
        for provider in providers:
            try:
                papers = provider.search(query, max(1, min(k, 10)))
            except FetchError as exc:
                errors.append(str(exc))
                continue
            found += [
                {"provider": p.provider, "title": p.title, "authors": list(p.authors[:5]),
                 "year": p.year, "doi": p.doi, "arxiv": p.arxiv_id, "url": p.url,
                 "open_access_pdf": p.pdf_url, "licence": p.licence, "abstract": p.abstract[:800]}
                for p in papers
            ]  # fmt: skip
        if not found and errors:
            raise ToolRetry("search_papers failed: " + "; ".join(errors))
        return found

    registry.add(search_papers)
