"""Figures in different currencies are compared only through a stated exchange rate
(`research.fx_rates`: rate, date, source), and the conflict says which; without a rate they stay
side by side, unconverted (#32: "currency, with the rate and date stated, or shown unconverted")."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from footnote.config import ResearchSettings
from footnote.config.research import FxRate
from footnote.pipelines.research.conflicts import Rates, find_conflicts
from footnote.pipelines.research.markdown import brief_markdown
from footnote.pipelines.research.outline import propose_outline
from footnote.types import Brief, BriefSection, Conflict, EvidenceCard

USD_CNY = FxRate(pair="USD/CNY", rate=7.1, date="2026-01-02", source="PBoC central parity")


def _card(cid: str, text: str) -> EvidenceCard:
    return EvidenceCard(cid, text, text, "l", source_id=cid, source_title=f"Source {cid}",
                        block_id="b-" + cid)  # fmt: skip


USD = _card("usd", "The Veldmark battery recycling market was worth USD 1.2 billion in 2023.")
CNY_LOWER = _card("cny", "2023年Veldmark电池回收市场规模为68亿元。")  # = USD 0.96bn at 7.1
CNY_SAME = _card("cny2", "2023年Veldmark电池回收市场规模为85.2亿元。")  # = USD 1.2bn at 7.1


def _conflicts(cards: list[EvidenceCard], rates: tuple[FxRate, ...] = ()) -> list[Conflict]:
    return find_conflicts(cards, lambda c: c.id, lambda _c: "", lambda _c: ["size"],
                          fx_rates=rates)  # fmt: skip


def test_without_a_rate_currencies_stay_side_by_side_unconverted() -> None:
    for cny in (CNY_LOWER, CNY_SAME):
        (conflict,) = _conflicts([USD, cny])
        assert {v.unit for v in conflict.values} == {"USD", "CNY"}
        assert "shown unconverted, no exchange rate is assumed" in conflict.note


def test_at_a_stated_rate_values_that_agree_are_no_conflict() -> None:
    assert _conflicts([USD, CNY_SAME], (USD_CNY,)) == []


def test_at_a_stated_rate_a_conflict_says_the_rate_its_date_and_source() -> None:
    (conflict,) = _conflicts([USD, CNY_LOWER], (USD_CNY,))
    # each value as its source states it; the comparison and the rate in the note
    assert {(v.unit, v.text) for v in conflict.values} == {("USD", "USD 1.2 billion"),
                                                           ("CNY", "68亿元")}  # fmt: skip
    assert "USD/CNY 7.1 on 2026-01-02 (source: PBoC central parity)" in conflict.note
    assert "68亿元 ≈ USD 958 million" in conflict.note and "unconverted" not in conflict.note
    outline = propose_outline("How large is the market?", "market_size")
    brief = Brief("run", outline.question, outline,
                  (BriefSection("size", "Market size", ()),), (USD, CNY_LOWER),
                  conflicts=(conflict,))  # fmt: skip
    markdown = brief_markdown(brief)
    assert "USD/CNY 7.1 on 2026-01-02" in markdown and "PBoC central parity" in markdown


def test_a_rate_works_both_ways_and_never_through_a_chain() -> None:
    cny_usd = FxRate(pair="CNY/USD", rate=1 / 7.1, date="2026-01-02", source="inverse")
    assert _conflicts([USD, CNY_SAME], (cny_usd,)) == []
    eur = _card("eur", "The Veldmark battery recycling market was worth EUR 1.0 billion in 2023.")
    eur_usd = FxRate(pair="EUR/USD", rate=1.2, date="2026-01-02", source="ECB")
    (conflict,) = _conflicts([eur, CNY_SAME], (USD_CNY, eur_usd))  # no EUR/CNY rate
    assert "shown unconverted" in conflict.note
    assert Rates((USD_CNY, eur_usd)).convert(1.0, "EUR", "CNY") is None


def test_the_setting_is_validated() -> None:
    settings = ResearchSettings.model_validate(
        {"fx_rates": [{"pair": "USD/CNY", "rate": 7.1, "date": "2026-01-02", "source": "x"}]}
    )
    assert settings.fx_rates == (FxRate(pair="USD/CNY", rate=7.1, date="2026-01-02", source="x"),)
    for bad in (
        {"pair": "USD-CNY", "rate": 7.1, "date": "2026-01-02", "source": "x"},
        {"pair": "USD/CNY", "rate": 0, "date": "2026-01-02", "source": "x"},
        {"pair": "USD/CNY", "rate": 7.1, "date": "2 Jan 2026", "source": "x"},
        {"pair": "USD/CNY", "rate": 7.1, "date": "2026-01-02", "source": ""},
        {"pair": "USD/CNY", "rate": 7.1, "source": "x"},
    ):
        with pytest.raises(ValidationError):
            ResearchSettings.model_validate({"fx_rates": [bad]})
