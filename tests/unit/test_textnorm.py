from footnote.textnorm import contains, fuzzy_contains, normalise, quantities, unmatched_numbers


def test_normalise_folds_pdf_artefacts() -> None:
    assert normalise("The ﬁrst  infor-\nmation\tStep") == "the first information step"
    assert normalise("ＡＢＣ１２３") == "abc123"
    assert normalise("知识 图谱 问答") == "知识图谱问答"
    assert normalise("“quoted” — text") == '"quoted" - text'


def test_contains_after_normalisation() -> None:
    assert contains("We use the eﬃcient infor-\nmation retrieval.", "efficient information")
    assert contains("系统 使用 知识图谱。", "使用知识图谱")
    assert not contains("abc", "")
    assert not contains("the model reached 85%", "reached 95%")


def test_fuzzy_contains_tolerates_extraction_noise() -> None:
    hay = "The accuracy of the proposed model on the test set is 91.2 percent overall."
    assert fuzzy_contains(hay, "accuracy of the model on the test set is 91.2 percent")
    assert not fuzzy_contains(hay, "the baseline collapsed completely on every benchmark")


def test_quantities_apply_scales_and_percent() -> None:
    values = {q.value for q in quantities("1.2 million users, 3亿 tokens, 12万 docs and 85%")}
    assert {1_200_000.0, 3e8, 1.2e5, 85.0} <= values
    assert quantities("1,234,567")[0].value == 1234567


def test_unmatched_numbers() -> None:
    evidence = "The corpus has 1,213,000 papers; accuracy improved from 62% to 91%."
    assert unmatched_numbers("It has 1.2 million papers.", evidence) == []
    assert unmatched_numbers("Accuracy reached 95%.", evidence) == ["95%"]
    assert unmatched_numbers("准确率从62%提高到91%", evidence) == []
    assert unmatched_numbers("Accuracy was 0.91.", "accuracy 91%") == []


def test_numbers_right_after_cjk_characters() -> None:
    assert [q.value for q in quantities("训练用了120万条样本")] == [1_200_000.0]
    assert unmatched_numbers("准确率为91%", "生成并逐条核查 | 91% | 0%") == []
