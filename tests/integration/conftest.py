"""Shared fixtures for integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_server import LlamaServer, gguf_05b


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    srv = LlamaServer(gguf_05b(), tmp_path_factory.mktemp("llsrv") / "server.log")
    yield srv
    srv.stop()
