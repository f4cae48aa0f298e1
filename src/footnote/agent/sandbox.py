"""A sandbox for short Python snippets: no network, no files of the host, bounded CPU, memory
and output.

A snippet runs in the system Python (`/usr/bin/python3`, never one under the home folder)
inside bubblewrap: new user, PID, network, IPC, UTS and cgroup namespaces, further user
namespaces disabled, all capabilities dropped, a fresh session, an empty environment; the file
system is `/usr` read-only plus an empty size-limited `/tmp`, `/proc` of the sandbox and a
minimal `/dev` (no home folder, no workspace, no `/etc`). A seccomp filter (libseccomp via
pyseccomp) refuses sockets, fork/vfork and process clones (threads still work), ptrace, mount,
namespace and keyring calls, bpf and perf. `prlimit` caps CPU seconds, address space, file size
(which bounds stdout: it is a file) and open files; a wall-clock timeout kills the rest. Run as
root, the sandbox first drops to `nobody`.

Inputs are named numbers (bound as variables); results are the snippet's top-level numeric
variables plus what it printed. Nothing runs when the sandbox cannot be built: the error says
what to install.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

from footnote.errors import SandboxUnavailable

Status = Literal["ok", "error", "timeout", "cpu_limit", "memory_limit", "output_limit", "killed"]
Value = int | float | bool | str | list[int | float]
RESULT_MARKER = "\x00footnote-result\x00"
MAX_VALUES = 50
MAX_CODE_CHARS = 8000
NOBODY = 65534

# The in-sandbox runner: lowers its own limits again, binds the inputs, runs the snippet with
# stdout captured (bounded), and writes one result line. Python 3.8+ syntax only.
_RUNNER = r"""
import io, json, math, resource, statistics, sys, traceback
payload = json.loads(sys.stdin.read())
sys.stdin = io.StringIO("")
mem = payload["memory_bytes"]
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
class OutputLimit(BaseException):
    pass
class Capped(io.StringIO):
    def __init__(self, cap):
        super().__init__()
        self.cap, self.size, self.truncated = cap, 0, False
    def write(self, s):
        if self.size + len(s) > self.cap:
            self.truncated = True
            super().write(s[: max(0, self.cap - self.size)])
            self.size = self.cap
            raise OutputLimit()
        self.size += len(s)
        return super().write(s)
out = Capped(payload["output_chars"])
real = sys.stdout
sys.stdout = sys.stderr = out
inputs = payload["inputs"]
ns = {"__name__": "__snippet__", "math": math, "statistics": statistics}
ns.update(inputs)
before = set(ns)
status, error = "ok", None
try:
    exec(compile(payload["code"], "<snippet>", "exec"), ns)
except MemoryError:
    status, error = "memory_limit", "MemoryError: the snippet ran out of memory"
except OutputLimit:
    status, error = "output_limit", "the snippet printed more than %d characters" % out.cap
except BaseException as exc:
    status = "error"
    error = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-500:]
sys.stdout = real
def ok(v):
    if isinstance(v, bool) or isinstance(v, int) or isinstance(v, float):
        return True
    if isinstance(v, str):
        return len(v) <= 200
    if isinstance(v, (list, tuple)):
        return len(v) <= 100 and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
    return False
values = {}
for k, v in ns.items():
    if k.startswith("_") or (k in before and k not in inputs) or not ok(v):
        continue
    if k in inputs and v == inputs[k]:
        continue
    values[k] = list(v) if isinstance(v, tuple) else v
    if len(values) >= payload["max_values"]:
        break
res = {"status": status, "error": error, "stdout": out.getvalue(),
       "truncated": out.truncated, "values": values}
real.write("\n" + payload["marker"] + json.dumps(res, allow_nan=True) + "\n")
real.flush()
import os
os._exit(0)
"""


@dataclass(frozen=True)
class SandboxLimits:
    """What one snippet may use."""

    cpu_seconds: int = 5
    wall_seconds: float = 15.0
    memory_mb: int = 256
    output_chars: int = 20_000
    tmp_mb: int = 8


@dataclass(frozen=True)
class SandboxResult:
    """What a snippet did: its status, printed text, numeric results and the time taken."""

    status: Status
    stdout: str = ""
    values: dict[str, Value] = field(default_factory=dict)
    error: str | None = None
    truncated: bool = False
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """The snippet ran to its end."""
        return self.status == "ok"


def system_python() -> Path | None:
    """The interpreter the sandbox runs: the system Python, outside any home folder."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        path = Path(candidate)
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def _seccomp_filter(out: IO[bytes]) -> None:
    """Write the BPF program of the syscall filter to `out`."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError) as exc:  # OSError: libseccomp.so missing
        raise SandboxUnavailable(
            f"the code sandbox needs pyseccomp and libseccomp ({exc}): run scripts/setup"
        ) from exc
    flt = sc.SyscallFilter(defaction=sc.ALLOW)
    eperm = sc.ERRNO(1)
    denied = (
        "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4", "sendto",
        "sendmsg", "recvfrom", "fork", "vfork", "ptrace", "process_vm_readv",
        "process_vm_writev", "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
        "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
        "kexec_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
        "swapoff", "acct", "io_uring_setup", "personality",
    )  # fmt: skip
    for name in denied:
        flt.add_rule(eperm, name)
    clone_thread = 0x00010000  # CLONE_THREAD: threads may be created, processes may not
    flt.add_rule(eperm, "clone", sc.Arg(0, sc.MASKED_EQ, clone_thread, 0))
    flt.add_rule(sc.ERRNO(38), "clone3")  # ENOSYS: libc falls back to clone(), filtered above
    flt.export_bpf(out)


class Sandbox:
    """Runs snippets under bubblewrap + seccomp + rlimits (see the module docstring)."""

    def __init__(self, limits: SandboxLimits | None = None, *, python: str | None = None) -> None:
        self.limits = limits or SandboxLimits()
        self._python = Path(python) if python else system_python()

    def problem(self) -> str | None:
        """Why the sandbox cannot run here (None when it can)."""
        if not shutil.which("bwrap"):
            return "bubblewrap (bwrap) is not installed: run scripts/setup (apt-get install bubblewrap)"
        if not shutil.which("prlimit"):
            return "prlimit (util-linux) is not installed"
        if self._python is None or not self._python.is_file():
            return "no system Python (/usr/bin/python3) for the sandbox: apt-get install python3"
        home = Path.home().resolve()
        if self._python.resolve().is_relative_to(home):
            return f"the sandbox Python {self._python} lies under the home folder {home}"
        try:
            import pyseccomp  # noqa: F401
        except (ImportError, OSError) as exc:
            return f"pyseccomp/libseccomp unavailable ({exc}): run scripts/setup"
        return None

    def _command(self, seccomp_fd: int) -> list[str]:
        lim = self.limits
        assert self._python is not None
        mem = lim.memory_mb * 2**20
        return [
            "prlimit",
            f"--cpu={lim.cpu_seconds}:{lim.cpu_seconds + 1}",
            f"--as={mem + 64 * 2**20}",  # bwrap's share; the runner lowers it to `mem`
            f"--fsize={_file_limit(lim)}",  # stdout is a file: this bounds it
            "--nofile=64",
            "--core=0",
            "--",
            "bwrap",
            "--unshare-all", "--unshare-user", "--disable-userns",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox",
            "--ro-bind", "/usr", "/usr",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin",
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(lim.tmp_mb * 2**20), "--tmpfs", "/tmp",
            "--chdir", "/tmp", "--clearenv", "--setenv", "PATH", "/usr/bin",
            "--seccomp", str(seccomp_fd),
            str(self._python), "-I", "-S", "-B", "-c", _RUNNER,
        ]  # fmt: skip

    def run(self, code: str, inputs: dict[str, float] | None = None) -> SandboxResult:
        """Run one snippet with `inputs` bound as variables; never raises for what it does."""
        why = self.problem()
        if why is not None:
            raise SandboxUnavailable(why)
        if len(code) > MAX_CODE_CHARS:
            return SandboxResult(
                "error", error=f"the snippet is longer than {MAX_CODE_CHARS} chars"
            )
        bad = [k for k in inputs or {} if not k.isidentifier() or k.startswith("_")]
        if bad:
            return SandboxResult("error", error=f"input names must be identifiers: {bad}")
        lim = self.limits
        payload = {
            "code": code,
            "inputs": dict(inputs or {}),
            "memory_bytes": lim.memory_mb * 2**20,
            "output_chars": lim.output_chars,
            "max_values": MAX_VALUES,
            "marker": RESULT_MARKER,
        }
        with (
            tempfile.TemporaryFile() as filt,
            tempfile.TemporaryFile() as stdin,
            tempfile.TemporaryFile() as stdout,
            tempfile.TemporaryFile() as stderr,
        ):
            _seccomp_filter(filt)
            filt.seek(0)
            stdin.write(json.dumps(payload).encode())
            stdin.seek(0)
            t0 = time.monotonic()
            drop: dict[str, Any] = {}
            if os.geteuid() == 0:
                drop = {"user": NOBODY, "group": NOBODY, "extra_groups": []}
            proc = subprocess.Popen(
                self._command(filt.fileno()),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                pass_fds=(filt.fileno(),),
                cwd="/",
                env={"PATH": "/usr/bin:/bin"},
                start_new_session=True,
                **drop,
            )
            try:
                rc = proc.wait(timeout=lim.wall_seconds)
                timed_out = False
            except subprocess.TimeoutExpired:
                _kill(proc)
                rc, timed_out = proc.wait(), True
            seconds = time.monotonic() - t0
            stdout.seek(0)
            data = stdout.read(_file_limit(lim) + 1)
            full = len(data) >= _file_limit(lim)
            raw = data.decode("utf-8", "replace")
            stderr.seek(0)
            err = stderr.read(4000).decode("utf-8", "replace")
        return _result(raw, err, rc, timed_out, seconds, lim, full=full)


def _file_limit(lim: SandboxLimits) -> int:
    """Bytes the sandbox may write to stdout (room for the result line beyond the output)."""
    return lim.output_chars * 4 + 256 * 1024


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill bwrap's process group; --die-with-parent and the PID namespace take the rest."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _result(
    raw: str,
    err: str,
    rc: int,
    timed_out: bool,
    seconds: float,
    lim: SandboxLimits,
    *,
    full: bool = False,
) -> SandboxResult:
    """Interpret what came back: the runner's result line, else the way the process died."""
    if timed_out:
        return SandboxResult(
            "timeout", error=f"stopped after {lim.wall_seconds:g} s of wall-clock time",
            seconds=seconds,
        )  # fmt: skip
    line = raw.rsplit(RESULT_MARKER, 1)[1].split("\n", 1)[0] if RESULT_MARKER in raw else ""
    data: dict[str, Any] | None = None
    if line:
        try:
            data = json.loads(line)
        except ValueError:
            data = None
    if data is None or not isinstance(data, dict):
        killed_by = 128 + signal.SIGXCPU, 128 + signal.SIGKILL, -signal.SIGXCPU, -signal.SIGKILL
        if rc in killed_by and seconds >= lim.cpu_seconds * 0.5:
            return SandboxResult(
                "cpu_limit", error=f"used more than {lim.cpu_seconds} s of CPU time",
                seconds=seconds,
            )  # fmt: skip
        if rc in (128 + signal.SIGXFSZ, -signal.SIGXFSZ) or full or "File too large" in err:
            return SandboxResult(
                "output_limit", error="the snippet wrote more output than allowed",
                truncated=True, seconds=seconds,
            )  # fmt: skip
        if "MemoryError" in err:
            return SandboxResult("memory_limit", error="out of memory", seconds=seconds)
        tail = err.strip().splitlines()[-1:] or [f"exit status {rc}"]
        return SandboxResult("killed", error=f"the snippet died: {tail[0][:300]}", seconds=seconds)
    values: dict[str, Value] = {}
    for k, v in (data.get("values") or {}).items():
        if isinstance(v, float) and not math.isfinite(v):
            continue
        if isinstance(v, bool | int | float | str) or (
            isinstance(v, list) and all(isinstance(x, int | float) for x in v)
        ):
            values[str(k)[:64]] = v
    status = str(data.get("status", "error"))
    return SandboxResult(
        status if status in ("ok", "error", "memory_limit", "output_limit") else "error",  # type: ignore[arg-type]
        stdout=str(data.get("stdout", ""))[: lim.output_chars],
        values=values,
        error=data.get("error"),
        truncated=bool(data.get("truncated")),
        seconds=seconds,
    )
