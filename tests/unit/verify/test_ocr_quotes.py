"""Quotes of OCR-read blocks match more leniently than quotes of a text layer."""

from __future__ import annotations

from footnote.types import Block
from footnote.verify.checks import check_citation
from footnote.verify.evidence import Evidence, EvidenceSet

PAGE = "Tbe model was trained on 400 papers frorn open archives in the spring."
QUOTE = "The model was trained on 400 papers from open archives"


def _evidence(ocr: float | None) -> EvidenceSet:
    block = Block("abc-p1-000001", "abc", "paragraph", PAGE, 1, ocr_confidence=ocr)
    return EvidenceSet([Evidence("E1", PAGE, block)])


def test_ocr_block_quote_with_misread_words_matches() -> None:
    check = check_citation("It used 400 papers.", "E1", _evidence(0.83), quote=QUOTE)
    assert check.quote_match == "fuzzy"


def test_text_layer_block_quote_with_the_same_differences_does_not() -> None:
    check = check_citation("It used 400 papers.", "E1", _evidence(None), quote=QUOTE)
    assert check.quote_match == "missing"


def test_ocr_leniency_still_rejects_a_different_passage() -> None:
    other = "Our budget covered two annotators for three weeks of careful work."
    check = check_citation("It used 400 papers.", "E1", _evidence(0.83), quote=other)
    assert check.quote_match == "missing"
