"""Settings of research briefs (`research.*`)."""

from __future__ import annotations

from pydantic import Field

from footnote.config.base import _Section


class FxRate(_Section):
    """One exchange rate a brief may compare figures through, stated with its date and source."""

    pair: str = Field(
        pattern=r"^[A-Z]{3}/[A-Z]{3}$",
        description="`BASE/QUOTE` in ISO 4217 codes: `USD/CNY` with rate 7.1 is 1 USD = 7.1 CNY.",
    )
    rate: float = Field(gt=0, description="Units of the quote currency per unit of the base.")
    date: str = Field(
        pattern=r"^\d{4}-\d{2}-\d{2}$", description="The day the rate is for (YYYY-MM-DD)."
    )
    source: str = Field(min_length=1, description="Where the rate comes from (stated in briefs).")


class ResearchSettings(_Section):
    """Research briefs: sources, the fetcher's egress policy, budgets, merge and review."""

    mode: str = Field(
        "brief",
        pattern="^(brief|baseline)$",
        description="`brief`: outline → plan → investigate → merge → conflicts → synthesise → "
        "check → checklist; `baseline`: one search, one model call, citations checked.",
    )
    search_url: str = Field(
        "",
        description="Web search provider: `searxng+http(s)://host[:port]` (SearXNG JSON API) or "
        "`brave+https://api.search.brave.com` (Brave Search API); empty: no web search.",
    )
    search_api_key_env: str = Field(
        "BRAVE_API_KEY", description="Environment variable holding the hosted search API's key."
    )
    scholarly: tuple[str, ...] = Field(
        (),
        description="Scholarly search providers: `openalex+https://api.openalex.org`, "
        "`arxiv+https://export.arxiv.org`, `s2+https://api.semanticscholar.org`; empty: none.",
    )
    scholarly_api_key_env: str = Field(
        "", description="Environment variable holding the Semantic Scholar API key (optional)."
    )
    pdf_licences: tuple[str, ...] = Field(
        ("cc-by", "cc-by-sa", "cc0", "public-domain", "arxiv"),
        description="Licences under which a paper's open-access PDF is fetched; other papers "
        "contribute their metadata and abstract only.",
    )
    licensed_url: str = Field(
        "", description="A licensed database's JSON API (`/search?q=…`); empty: none."
    )
    licensed_api_key_env: str = Field(
        "FOOTNOTE_LICENSED_KEY", description="Environment variable holding its API key."
    )
    licensed_labels: tuple[str, ...] = Field(
        ("no-external-model",),
        description="Labels every licensed record carries (its cards and claims inherit them).",
    )
    allowed_domains: tuple[str, ...] = Field(
        (),
        description="Domains (and subdomains) pages may be fetched from; `*` is any public host; "
        "empty: nothing is fetched.",
    )
    allow_loopback: bool = Field(
        False,
        description="Allow a loopback address for hosts pinned in `resolve` (for tests only; never "
        "for a DNS answer or an address written in a URL).",
    )
    resolve: dict[str, str] = Field(
        default_factory=dict,
        description="Fixed DNS answers (`host` or `*.suffix` → address), like curl's --resolve; "
        "the answers pass the same address checks.",
    )
    fetch_max_bytes: int = Field(5_000_000, ge=1024, description="Largest page body fetched.")
    fetch_timeout_s: float = Field(15.0, gt=0, description="Time limit of one fetch.")
    max_redirects: int = Field(5, ge=0, le=20, description="Redirect hops followed per fetch.")
    budget_tokens: int = Field(300_000, ge=1, description="Token budget of one brief.")
    budget_minutes: float = Field(45.0, gt=0, description="Wall-clock budget of one brief.")
    budget_calls: int = Field(600, ge=1, description="Model-call budget of one brief.")
    budget_searches: int = Field(
        60, ge=1, description="Searches (library, web, scholarly) per brief."
    )
    budget_fetches: int = Field(80, ge=1, description="Page fetches per brief.")
    reserve_fraction: float = Field(
        0.3, ge=0, lt=1, description="Share of the budget kept for synthesis and checks."
    )
    warn_fraction: float = Field(
        0.8, gt=0, le=1, description="A budget event warns when this share of a budget is used."
    )
    wrap_up_fraction: float = Field(
        0.9,
        gt=0,
        le=1,
        description="At this share of the run's budget no new sub-question starts: the run "
        "writes the checklist and a brief that says what it does not cover.",
    )
    parallel: int = Field(1, ge=1, le=16, description="Sub-questions investigated at once.")
    results_per_search: int = Field(
        5, ge=1, le=50, description="Results read per web, scholarly or licensed search."
    )
    library_k: int = Field(12, ge=1, le=100, description="Blocks read per library search.")
    fetches_per_search: int = Field(5, ge=0, le=20, description="Result pages fetched per search.")
    cards_per_question: int = Field(
        0,
        ge=0,
        le=200,
        description="Cards a sub-question keeps: 0 = as many as its chapter aims at "
        "(`research.target_pages` at the run's budget); a number fixes it.",
    )
    target_pages: float = Field(
        10.0,
        gt=0,
        le=100,
        description="Pages of checked claims a brief aims at (500 words or 1,000 CJK characters "
        "a page, 20 sentences a page), shared equally by its chapters; a chapter gets fewer "
        "when its share of the budget's synthesis reserve pays for fewer (about 500 tokens a "
        "checked sentence), and never more than its evidence holds (one sentence per card).",
    )
    select: str = Field(
        "auto",
        pattern="^(auto|model|rules)$",
        description="Which candidate snippets become cards: the `understand` model picks them "
        "(`model`), code ranks them by the sub-question's words (`rules`), or `auto`.",
    )
    rank_sentences: str = Field(
        "embedder",
        pattern="^(embedder|words)$",
        description="How code ranks the sentences of what a search returned before any become "
        "cards: `embedder` adds each sentence's closeness to the sub-question by the `embed` "
        "role (any language; a sentence sharing fewer than two of its words may still be "
        "one), `words` counts the sub-question's words a sentence shares (at least two).",
    )
    figure_relevance: float = Field(
        0.79,
        ge=0.0,
        le=1.0,
        description="Papers' undated figures of one measure are set side by side in a brief "
        "(conflicts of kind `settings`) only from cards whose sentence is this close to the "
        'research question by the `embed` role (cosine; with `rank_sentences = "embedder"`); '
        "0 keeps every such figure. Fitted on the research dev and multi-document sets: 0.79 "
        "kept 153 of 161 figures in briefs about the papers and 10 of 81 in briefs on other "
        "topics.",
    )
    model_claims: bool = Field(
        True,
        description="A card's claim is what its snippet asserts about the sub-question, written "
        "by the `understand` model and kept only when the gate finds it in the snippet (numbers, "
        "words, the judge's entailment when bound) and it bears on the sub-question; otherwise, "
        "and with `false`, the claim is the verbatim snippet.",
    )
    writer: str = Field(
        "auto",
        pattern="^(auto|model|extractive)$",
        description="How chapters are written: the `compose` model citing card ids (`model`), "
        "the cards' own sentences (`extractive`), or `auto` (model when bound).",
    )
    planner: str = Field(
        "template",
        pattern="^(auto|model|template)$",
        description="Who plans: the `understand` model proposes the outline for a free question "
        "and, per sub-question, reads what was found and picks the next query until nothing is "
        "missing or its budget's rounds are spent (`model`); the report template and its fixed "
        "queries (`template`, the default); or `auto` (model when the `understand` role is bound "
        "and `research.select` is not `rules`). An invalid "
        "model outline or a refused call falls back to the template, and the run says so.",
    )
    near_duplicate: float = Field(
        0.5, gt=0, le=1, description="MinHash Jaccard above which two pages are near-duplicates."
    )
    attribution_confidence: float = Field(
        0.8,
        ge=0,
        le=1,
        description="Confidence at which a reprint is attributed to its origin; below it the "
        "source is `independence unconfirmed` and left to the analyst.",
    )
    review_sample_rate: float = Field(
        0.2, ge=0, le=1, description="Share of claims without key numbers sampled for review."
    )
    fx_rates: tuple[FxRate, ...] = Field(
        (),
        description="Exchange rates conflicts may compare figures in different currencies "
        'through: `{pair = "USD/CNY", rate = 7.1, date = "2026-01-02", source = "…"}` (1 USD = '
        "7.1 CNY; either direction of a pair is used, no chain of rates). A conflict converted "
        "through one states the rate, its date and source; figures in currencies without a rate "
        "are shown side by side unconverted.",
    )
