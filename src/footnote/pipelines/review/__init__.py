"""The analyst's review of a research brief: decisions replayed from the action log, the
version hash, coverage, what blocks a sign-off, and the reviewed brief."""
