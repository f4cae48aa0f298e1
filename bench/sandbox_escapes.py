"""Sandbox escape attempts (tried / blocked) and the sandbox's start-up cost as a ratio against
a plain `python3 -c` subprocess measured in the same run.

    .venv/bin/python bench/sandbox_escapes.py [--repeat 10]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "data"))
from sandbox_attacks import ATTACKS

from footnote.agent.sandbox import Sandbox, SandboxLimits, system_python


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    box = Sandbox(SandboxLimits(cpu_seconds=1, wall_seconds=4, memory_mb=128))
    problem = box.problem()
    if problem:
        sys.exit(f"sandbox unavailable: {problem}")
    os.environ["FOOTNOTE_SANDBOX_CANARY"] = "s3cr3t"
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.01)
    with tempfile.TemporaryDirectory() as tmp:
        secret = Path(tmp) / "footnote-canary.txt"
        secret.write_text("canary", encoding="utf-8")
        outside = Path(tmp) / "escaped.txt"
        blocked = 0
        for name, code, check in ATTACKS:
            snippet = code.replace("{port}", str(srv.getsockname()[1]))
            snippet = snippet.replace("{secret}", str(secret)).replace("{outside}", str(outside))
            r = box.run(snippet, {})
            try:
                srv.accept()
                connected = True
            except OSError:
                connected = False
            ok = check({"status": r.status, "stdout": r.stdout, "values": r.values})
            ok = ok and not outside.exists() and not connected
            blocked += ok
            print(f"{'blocked' if ok else 'ESCAPED'}  {r.status:13} {r.seconds:5.2f}s  {name}")
    print(f"\nescape attempts: tried {len(ATTACKS)}, blocked {blocked}")
    py = str(system_python())
    plain, boxed = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        subprocess.run([py, "-I", "-S", "-c", "x = (1 + 2) / 2"], check=True)
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assert box.run("x = (a + b) / 2", {"a": 1.0, "b": 2.0}).ok
        boxed.append(time.perf_counter() - t0)
    p, b = statistics.median(plain), statistics.median(boxed)
    print(f"median start-to-result: plain subprocess {p * 1000:.1f} ms (baseline), "
          f"sandbox {b * 1000:.1f} ms, ratio {b / p:.2f}x")  # fmt: skip
    sys.exit(0 if blocked == len(ATTACKS) else 1)


if __name__ == "__main__":
    main()
