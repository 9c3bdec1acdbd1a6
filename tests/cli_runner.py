"""``run_cli``: the real console entry point in a real child process, forked from a server that has
imported the command line once (tests/cli_zygote.py) instead of a fresh interpreter a call.

A fresh ``python -m tscontract`` spends ~0.5 s of CPU starting and importing; a fork of the server
spends a few milliseconds. The child sees the caller's environment and working directory at call time,
writes to files for stdout and stderr (no pipe to fill) and exits with the code the interpreter would
give (tests/test_cli_runner.py compares it with a fresh interpreter). Tests of start-up, signals or
process handling start their own processes. Calls from several threads of one test process run one
after another (a test of commands running at the same time starts its own processes, as
tests/gate/test_store_access.py does).
"""

from __future__ import annotations

import atexit
import json
import locale
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_ENV_AT_START = dict(os.environ)  # the server imports in the environment the session started with


class ForkServer:
    """One server a test process, started at its first call, restarted if it died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: subprocess.Popen[str] | None = None

    def _running(self) -> subprocess.Popen[str]:
        if self._server is None or self._server.poll() is not None:
            self._server = subprocess.Popen(
                [sys.executable, "-m", "tests.cli_zygote"],
                cwd=ROOT,
                env=_ENV_AT_START,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                encoding="utf-8",
            )
            atexit.register(self.close)
        return self._server

    def close(self) -> None:
        if self._server is not None and self._server.poll() is None:
            assert self._server.stdin is not None
            self._server.stdin.close()  # the server exits at the end of its input
            self._server.wait(timeout=30)

    def wait_status(self, args: list[str], cwd: Path, out: Path, err: Path) -> int:
        """Run ``python -m tscontract ARGS`` in a fork; its wait status (as ``os.waitpid`` gives it)."""
        request = {"args": args, "cwd": str(cwd), "env": dict(os.environ), "out": str(out), "err": str(err)}
        with self._lock:
            server = self._running()
            assert server.stdin is not None and server.stdout is not None
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            answer = server.stdout.readline()
        if not answer:
            raise RuntimeError(f"the fork server of run_cli exited ({server.wait()}); see its stderr")
        return int(json.loads(answer)["status"])


SERVER = ForkServer()


def _text(data: bytes) -> str:
    """What ``subprocess.run(text=True)`` makes of output: the locale's encoding, universal newlines."""
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


def run_forked(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m tscontract ARGS`` in a child of the fork server; as ``subprocess.run`` reports it."""
    argv = [str(arg) for arg in args]
    with tempfile.TemporaryDirectory(prefix="run_cli-") as tmp:
        out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
        out.touch()
        err.touch()
        status = SERVER.wait_status(argv, Path(os.path.abspath(cwd or ROOT)), out, err)
        stdout, stderr = _text(out.read_bytes()), _text(err.read_bytes())
    code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return subprocess.CompletedProcess([sys.executable, "-m", "tscontract", *argv], code, stdout, stderr)


def run_fresh(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m tscontract ARGS`` in a fresh interpreter (for tests of start-up itself)."""
    return subprocess.run(
        [sys.executable, "-m", "tscontract", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        check=False,
    )
