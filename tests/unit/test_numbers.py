"""Numbers with units, scales, words, ranges and approximations (issue 13, finding 5), and the
dates-in-range check (finding 9). Evidence sentences are copied from the shared QASPER papers."""

from __future__ import annotations

from footnote.textnorm import parse_number, quantities, same_quantity, unmatched_numbers

# 1811.00942 (QASPER train sample)
RPI = (
    "On the RPi, KN-5 is both fast and power-efficient to run, using only about 7 ms/query and "
    "6 mJ/query for PTB (Table 2 , row 1), and 264 ms/q and 229 mJ/q on WT103 (row 5)."
)
QRNN = (
    "The wt103-qrnn model is completely unusable on phones, taking over 1.2 seconds per "
    "next-word prediction."
)
PTB = (
    "Preprocessed by BIBREF14 , PTB contains 887K tokens for training, 70K for validation, and "
    "78K for test, with a vocabulary size of 10,000."
)
DROPS = (
    "Neural models achieve perplexity drops of 60–80% and R@3 increases of 22–34%, but these "
    "improvements come at a much higher cost in latency and energy usage."
)
# 2003.07723
CROWD = (
    "On average, each crowd annotator uses two emotion labels per stanza (56% of cases); only "
    "in 36% of the cases the annotators use one label, and in 6% and 1% of the cases three and "
    "four labels, respectively."
)
GOLD = (
    "We asked these two experts to use the generated gold standard (48 poems; majority votes of "
    "3 annotators plus manual curation) as a reference."
)
# 1907.05664
CNN = (
    "It contains around three hundred thousand news articles coupled with summaries of about "
    "three sentences."
)
# 1909.00694
PAIRS = (
    "From the corpus of about 100 million sentences, we obtained 1.4 millions event pairs for "
    "AL, 41 millions for CA, and 6 millions for CO."
)
# 1805.02400
EPOCH = "Training one epoch takes in average 72 minutes."


def test_time_units_are_compared_not_just_digits() -> None:
    """Finding 5: "5 ms" passed against "5 s"."""
    assert unmatched_numbers("KN-5 takes 7 s per query on the RPi.", RPI) == ["7 s"]
    assert unmatched_numbers("KN-5 takes 7 ms per query on the RPi.", RPI) == []
    assert unmatched_numbers("It takes over 1,200 ms per prediction.", QRNN) == []
    assert unmatched_numbers("It takes 1.2 minutes per prediction.", QRNN) == ["1.2 minutes"]
    assert unmatched_numbers("One epoch takes 1.2 hours.", EPOCH) == []
    assert unmatched_numbers("One epoch takes 72 seconds.", EPOCH) == ["72 seconds"]


def test_percent_is_not_a_count() -> None:
    """Finding 5: "85%" passed against "85 annotators"."""
    assert unmatched_numbers("48% of the poems were annotated.", GOLD) == ["48%"]
    assert unmatched_numbers("The gold standard has 48 poems.", GOLD) == []
    assert unmatched_numbers("Majority votes of 3 experts were used.", GOLD) == ["3"]
    assert unmatched_numbers("Votes came from 3 annotators.", GOLD) == []
    assert unmatched_numbers("Annotators use two labels in 56% of cases.", CROWD) == []


def test_number_words_keep_their_size() -> None:
    """Finding 5: "three thousand" passed against "3"."""
    assert unmatched_numbers("It has about 300,000 news articles.", CNN) == []
    assert unmatched_numbers("It has 300 news articles.", CNN) == ["300"]
    assert unmatched_numbers("The reference has three thousand poems.", GOLD) == ["three thousand"]
    assert unmatched_numbers("Summaries have about 3 sentences.", CNN) == []
    assert unmatched_numbers("两位专家参与了标注。", GOLD) == []
    assert unmatched_numbers("共有三百首诗。", GOLD) == ["三百"]


def test_a_bare_m_is_a_metre_not_a_million() -> None:
    """Finding 5: a bare "m" was read as million."""
    assert [q.value for q in quantities("a 5 m mast")] == [5.0]
    assert quantities("a 5 m mast")[0].family == "length"
    assert unmatched_numbers("The mast is 5 m tall.", "a mast of 5,000,000 units") == ["5 m"]
    assert [q.value for q in quantities("2,500M and 800M tokens")] == [2.5e9, 8e8]


def test_scales_as_suffix_and_words() -> None:
    assert unmatched_numbers("PTB has 887,000 training tokens.", PTB) == []
    assert unmatched_numbers("PTB has 887 million training tokens.", PTB) == ["887 million"]
    assert unmatched_numbers("They obtained 1.4 million event pairs for AL.", PAIRS) == []
    assert unmatched_numbers("语料约有1亿个句子。", PAIRS) == []
    assert unmatched_numbers("语料约有1万个句子。", PAIRS) == ["1万"]


def test_ranges_carry_their_unit() -> None:
    assert unmatched_numbers("Perplexity drops by 60% to 80%.", DROPS) == []
    [low, high] = [q for q in quantities("drops of 60–80%")]
    assert low.percent and high.percent
    assert unmatched_numbers("R@3 increases by 22 ms.", DROPS) == ["22 ms"]


def test_approximations_allow_their_rounding() -> None:
    assert unmatched_numbers("The corpus has about 95 million sentences.", PAIRS) == []
    assert unmatched_numbers("The corpus has 95 million sentences.", PAIRS) == ["95 million"]
    assert unmatched_numbers("KN-5 uses ~7 ms per query.", RPI) == []


def test_currency_and_data_sizes() -> None:
    assert unmatched_numbers("It costs $5.", "The API costs 5 euros per call.") == ["$5"]
    assert unmatched_numbers("It costs 5 dollars.", "The API costs $5 per call.") == []
    assert unmatched_numbers("It has 32 GB of RAM.", "32GB RAM and one GPU") == []
    assert unmatched_numbers("It has 32 MB of RAM.", "32GB RAM and one GPU") == ["32 MB"]


def test_years_inside_a_stated_range_pass() -> None:
    """Finding 9: the design's dates-in-range check did not exist."""
    evidence = "The corpus covers poems written from 1770 to 1900."
    assert unmatched_numbers("It includes poems from 1820.", evidence) == []
    assert unmatched_numbers("It includes poems from 1950.", evidence) == ["1950"]
    assert unmatched_numbers("Poems of 1990 are included.", "data collected 1985–2005") == []


def test_same_quantity_and_parse_number_still_read_plain_values() -> None:
    [a] = quantities("85%")
    [b] = quantities("0.85")
    assert same_quantity(a, b)
    assert parse_number("887K") == 887_000
    assert parse_number("three") == 3
    assert parse_number("50 tokens") == 50


def test_labels_are_not_counts_and_chinese_measure_words_vary() -> None:
    assert unmatched_numbers("Table 2 shows the scores.", "Table 2 lists F1 per model.") == []
    assert unmatched_numbers("Section 3 describes it.", "In Section 3 we define it.") == []
    assert unmatched_numbers("共有3个模型。", "我们比较了3种模型。") == []
    assert unmatched_numbers("共有3个模型。", "We compare 3 models.") == []


def test_names_and_abbreviated_units_from_real_claims() -> None:
    """Claims and passages of the shared citation-integrity set: a name's number is a label,
    a unit against a noun the table does not know agrees, abbreviated nouns agree."""
    passage = (
        "SARS-CoV-2-infected ferrets shed virus in nasal washes as early as 2 dpi and persisted "
        "until 4 and 6 dpi; assays with higher LODs [i.e., around 105 cp/ml (7–9)]."
    )
    assert unmatched_numbers("Ferrets are susceptible to SARS-CoV-2 infection.", passage) == []
    assert unmatched_numbers("Virus was isolated from 2 to 4–6 days post-infection.", passage) == []
    assert unmatched_numbers("The detection limit is about 105.0 copies/mL.", passage) == []
    assert unmatched_numbers("The detection limit is 105%.", passage) == ["105%"]


# LaTeX-era QASPER sentences (1902.09666, leval-fbedb418da, 1905.11268, 1805.02400)
KAPPA = "INLINEFORM1 is .83 for Layer A (OFF vs NOT) indicating high agreement."
MATH_COUNT = (
    "DT BIBREF7: Formed by $24,783$ tweets annotated as hate, offensive language or neither."
)
MATH_PERCENT = (
    "simple 1-2 character attacks can bring down the accuracy of BERT ( $89\\%$ to $31\\%$ )"
)
ESCAPED_PERCENT = "the reviews were detected with class-averaged \\emph{F-score of only 56\\%}"


def test_a_number_written_with_a_leading_point_is_a_number() -> None:
    """ ".83" was no number at all, so an invented ".85" passed against it."""
    assert [q.value for q in quantities(KAPPA)] == [0.83]
    assert unmatched_numbers("Agreement was .85 for Layer A.", KAPPA) == [".85"]
    assert not unmatched_numbers("Agreement was .83 for Layer A.", KAPPA)
    assert not quantities("version v1.83") and [q.value for q in quantities("at 0.83")] == [0.83]


def test_latex_math_dollars_are_no_currency_and_an_escaped_percent_is_a_percent() -> None:
    """`$24,783$ tweets` read as 24,783 US dollars; `89\\%` as a bare 89."""
    (count,) = quantities(MATH_COUNT)
    assert (count.value, count.family, count.noun) == (24783.0, "count", "tweet")
    assert [(q.value, q.family) for q in quantities(MATH_PERCENT)[-2:]] == [
        (89.0, "percent"), (31.0, "percent")
    ]  # fmt: skip
    assert [(q.value, q.family) for q in quantities(ESCAPED_PERCENT)] == [(56.0, "percent")]
    assert not unmatched_numbers("The dataset has 24,783 tweets.", MATH_COUNT)
    assert [(q.value, q.family) for q in quantities("It costs $5.")] == [(5.0, "currency:USD")]


def test_a_thousands_k_written_apart_keeps_its_scale() -> None:
    """1912.02481: "742 k selected tokens" read as 742 tokens."""
    (q,) = quantities("Twi embeddings are better when training on 742 k selected tokens.")
    assert (q.value, q.family, q.text) == (742_000.0, "count", "742 k")
    assert [q.value for q in quantities("a top 5 k")] == [5.0]  # no word follows: no scale
