"""The `footnote` command line: thin commands over `Workspace`; `--json` for scripts.

Each module registers its commands on the shared `app` when imported here.
"""

from footnote.cli import (  # noqa: F401  (registers commands)
    asking,
    chat,
    configuration,
    documents,
    evaluation,
    export,
    graph,
    keys,
    mcp_command,
    migrate,
    models,
    reproduce,
    research,
    serve,
    worker,
)
from footnote.cli.common import app


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["app", "main"]
