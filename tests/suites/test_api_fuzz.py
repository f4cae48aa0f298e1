"""Suite 2, API fuzzing: schemathesis generates requests for every operation of the running
server's OpenAPI document (a live uvicorn on loopback, real store and ask), in single-user
mode, with an API key, and keyed but without one. Counted: requests (tried), 4xx answers in
the one error shape (blocked), and any 5xx or error outside that shape (lost: must be 0)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from suite_support import LiveServer, tally

from footnote.server.state import ServerDeps
from footnote.workspace import Workspace

pytestmark = [pytest.mark.integration, pytest.mark.slow]  # CI runs them (./scripts/test)
EXAMPLES = 12
"""Generated cases per operation and mode (21 operations x 3 modes x 12: about 750 requests)."""


def _error_shape(body: str) -> bool:
    try:
        data = json.loads(body)
    except ValueError:
        return False
    err = data.get("error") if isinstance(data, dict) else None
    return (
        isinstance(err, dict)
        and set(err) == {"code", "message", "detail"}
        and all(isinstance(err[k], str) for k in ("code", "message"))
    )


def _fuzz(url: str, headers: dict[str, str], mode: str, problems: list[str]) -> None:
    t = tally("api-fuzz")
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json")
    for result in schema.get_all_operations():
        operation = result.ok()

        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(case=operation.as_strategy())
        def run(case: Any) -> None:
            resp = case.call(headers=headers, timeout=20)
            bad = resp.status_code >= 500 or (
                resp.status_code >= 400 and not _error_shape(resp.text)
            )
            if bad:
                problems.append(f"{mode} {case.operation.label} {case.path_parameters} -> "
                                f"{resp.status_code} {resp.text[:200]}")  # fmt: skip
            t.add(tried=1, blocked=int(400 <= resp.status_code < 500 and not bad), lost=int(bad))

        run()


def test_no_5xx_and_one_error_shape_with_and_without_keys(fast_ws: Workspace, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "paper.md").write_text("# Study\n\nHybrid retrieval reached 0.74 recall.\n")
    fast_ws.ingest([tmp_path / "paper.md"])
    problems: list[str] = []
    with LiveServer(fast_ws, ServerDeps(use_models=False)) as srv:
        _fuzz(srv.url, {}, "single-user", problems)
        key = srv.app.state.footnote.auth.add_key("fuzzer", ("team",))
        _fuzz(srv.url, {"X-API-Key": key}, "keyed", problems)
        _fuzz(srv.url, {}, "keyed-without-key", problems)
    assert not problems, problems[:10]
