"""`python -m footnote.cli`: the same as the `footnote` command."""

from footnote.cli import main

main()
