"""The code sandbox: snippets compute over their inputs; every escape attempt fails safely."""

from __future__ import annotations

import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from footnote.agent.sandbox import Sandbox, SandboxLimits
from footnote.errors import SandboxUnavailable

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "data"))
from sandbox_attacks import ATTACKS

LIMITS = SandboxLimits(cpu_seconds=1, wall_seconds=4, memory_mb=128, output_chars=20_000)
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the sandbox needs Linux")


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    box = Sandbox(LIMITS)
    problem = box.problem()
    # on Linux a missing bubblewrap is a failed setup, not a reason to skip: scripts/setup installs it
    assert problem is None, problem
    return box


@pytest.fixture(scope="module")
def listener() -> Iterator[tuple[int, list[Any]]]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(5)
    accepted: list[Any] = []

    def serve() -> None:
        try:
            while True:
                accepted.append(srv.accept())
        except OSError:
            return

    threading.Thread(target=serve, daemon=True).start()
    yield srv.getsockname()[1], accepted
    srv.close()


@pytest.fixture(scope="module")
def secret(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("host") / "footnote-canary.txt"
    path.write_text("canary: the sandbox must not read this", encoding="utf-8")
    return path


def test_a_snippet_computes_over_named_inputs(sandbox: Sandbox) -> None:
    result = sandbox.run(
        "avg = (a + b + c) / 3\nprint(f'{avg:.3f}')", {"a": 81.5, "b": 77.9, "c": 77.1}
    )
    assert result.ok, result.error
    assert result.values == {"avg": pytest.approx(78.8333333)}
    assert result.stdout.strip() == "78.833"


def test_an_error_in_the_snippet_is_reported_not_raised(sandbox: Sandbox) -> None:
    result = sandbox.run("x = 1 / 0", {})
    assert result.status == "error" and "ZeroDivisionError" in (result.error or "")


def test_bad_input_names_are_refused(sandbox: Sandbox) -> None:
    assert sandbox.run("y = 1", {"__import__": 1.0}).status == "error"


@pytest.mark.parametrize("name,code,blocked", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_escape_attempts_are_blocked(
    sandbox: Sandbox,
    listener: tuple[int, list[Any]],
    secret: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    code: str,
    blocked: Any,
) -> None:
    monkeypatch.setenv("FOOTNOTE_SANDBOX_CANARY", "s3cr3t")
    port, accepted = listener
    outside = tmp_path / "escaped.txt"
    snippet = code.replace("{port}", str(port)).replace("{secret}", str(secret))
    snippet = snippet.replace("{outside}", str(outside))
    result = sandbox.run(snippet, {})
    data = {"status": result.status, "stdout": result.stdout, "values": result.values}
    assert blocked(data), f"{name}: not blocked: {data} {result.error}"
    assert not outside.exists(), "a file appeared outside the sandbox"
    assert not accepted, "the loopback server got a connection"
    assert result.seconds < LIMITS.wall_seconds + 5


def test_limits_come_from_the_settings(tmp_path: Path) -> None:
    from footnote.workspace import Workspace
    from footnote.workspace.reproduce import sandbox as sandbox_of

    code = "print('x' * 500)\nimport time\nt = time.process_time()\nwhile time.process_time() - t < 2.5:\n    pass\ndone = 1"
    with Workspace.open(tmp_path / "a", overrides={"sandbox": {"output_chars": 100}}) as ws:
        assert sandbox_of(ws).run(code, {}).status == "output_limit"
    with Workspace.open(tmp_path / "b", overrides={"sandbox": {"cpu_seconds": 1}}) as ws:
        assert sandbox_of(ws).run(code, {}).status == "cpu_limit"
    with Workspace.open(tmp_path / "c", overrides={"sandbox": {"cpu_seconds": 10}}) as ws:
        assert sandbox_of(ws).run(code, {}).values["done"] == 1
    with Workspace.open(tmp_path / "d", overrides={"sandbox": {"memory_mb": 64}}) as ws:
        assert sandbox_of(ws).run("x = bytearray(100 * 2**20)\nok = 1", {}).status == "memory_limit"
    with Workspace.open(tmp_path / "e", overrides={"sandbox": {"wall_seconds": 1}}) as ws:
        assert sandbox_of(ws).run("import time\ntime.sleep(5)", {}).status == "timeout"


def test_a_python_under_the_home_folder_is_refused(tmp_path: Path) -> None:
    fake = Path.home() / ".footnote-test-python"
    box = Sandbox(LIMITS, python=str(fake))
    fake.write_text("")
    try:
        assert "home folder" in (box.problem() or "")
        with pytest.raises(SandboxUnavailable):
            box.run("x = 1", {})
    finally:
        os.unlink(fake)
