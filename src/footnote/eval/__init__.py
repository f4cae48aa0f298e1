"""Evaluation harness (L7): datasets, metrics, stored runs, diffs and reports for `footnote eval`."""
