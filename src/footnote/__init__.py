"""footnote: answers about papers where every sentence carries a checked footnote."""

__version__ = "0.1.0"
