"""The reproduction job: a paper's experiment settings as a cited table, and cross-checks of
the aggregates it states (averages, sums, differences, shares)."""
