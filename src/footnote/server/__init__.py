"""The HTTP API (L7): FastAPI routers over the workspace, SSE run streams, one error shape."""

from footnote.server.app import create_app

__all__ = ["create_app"]
