"""Text hygiene: ligatures, odd Unicode, hyphenation, CJK joining, language, sentences."""

from __future__ import annotations

from footnote.ingest.cleanup import clean_text, garbled_reason, join_lines
from footnote.textnorm import split_sentences
from footnote.textnorm import text_lang as detect_lang


def test_ligatures_expand() -> None:
    assert clean_text("\ufb01nd the \ufb02ow of e\ufb00ort, o\ufb03ce, ba\ufb04e") == (
        "find the flow of effort, office, baffle"
    )


def test_odd_unicode_is_cleaned_not_crashed_on() -> None:
    assert clean_text("a\x00b\x07c\ud800d\u200be") == "abcde"
    assert clean_text("  many   spaces\u3000here ") == "many spaces here"


def test_hyphenation_repaired_but_compounds_kept() -> None:
    assert join_lines(["the infor-", "mation age"]) == "the information age"
    assert join_lines(["a state-of-the-", "art model"]) == "a state-of-the-art model"
    assert join_lines(["see Smith-", "Jones"]) == "see Smith-Jones"


def test_vocabulary_keeps_known_hyphenated_words() -> None:
    vocab = {"self-attention"}
    assert join_lines(["uses self-", "attention"], vocab) == "uses self-attention"


def test_cjk_lines_join_without_space() -> None:
    assert join_lines(["知识图谱是一种", "表示知识的方法。"]) == "知识图谱是一种表示知识的方法。"
    assert join_lines(["英文 word", "中文"]) == "英文 word 中文"


def test_detect_lang() -> None:
    assert detect_lang("知识图谱是一种用图结构表示知识的方法") == "zh"
    assert detect_lang("A plain English sentence about graphs.") == "en"
    assert detect_lang("We use BERT 模型 for this long English sentence about things.") == "en"


def test_garbled_detection() -> None:
    assert garbled_reason("\ue000\ue001\ue002 " * 40) is not None
    shifted = " ".join(["Uif", "npefm", "jt", "usbjofe", "po", "ebub", "gspn", "nboz"] * 20)
    assert garbled_reason(shifted) is not None
    normal = "The model is trained on data from the web and it is evaluated on a test set. " * 10
    assert garbled_reason(normal) is None


def test_sentence_split_english_and_chinese() -> None:
    assert split_sentences("One sentence. Another one, e.g. this. Third!") == [
        "One sentence.",
        "Another one, e.g. this.",
        "Third!",
    ]
    assert split_sentences("第一句。第二句！第三句？") == ["第一句。", "第二句！", "第三句？"]


def test_surrogate_pairs_from_pdf_glyphs_are_joined() -> None:
    # Paper Plain's equation (1) read glyph by glyph: math italic E as two UTF-16 halves; the
    # formula's LaTeX kept them and the whole PDF failed to store ("surrogates not allowed")
    from footnote.ingest.cleanup import join_surrogates

    raw = "\ud835\udc38[\ud835\udc66]=\ud835\udefd_{0}"
    joined = join_surrogates(raw)
    assert joined == "𝐸[𝑦]=𝛽_{0}"
    joined.encode("utf-8")
    assert join_surrogates("a\ud835b") == "ab"
    assert join_surrogates("plain") == "plain"
