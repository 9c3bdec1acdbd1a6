"""The fork server behind ``tests.conftest.run_cli`` (``python -m tests.cli_zygote``; see tests/cli_runner.py).

It imports the command line's modules once, then reads one request a line on its stdin (JSON: args, cwd,
environment, the files for stdout and stderr) and forks a child per request. The child takes the request's
working directory and environment, points fds 0/1/2 at /dev/null and the two files, runs
``python -m tscontract ARGS`` as the interpreter would (``runpy._run_module_as_main``) and exits with
the code the interpreter would exit with. The server answers with the child's wait status. Every call
is a fresh fork of a process that only imported: no state of one call reaches the next.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import sys
import threading
import time
import traceback
from typing import Any

# what most commands import (the modules of a `validate`); the rest each child imports itself
PRELOAD = (
    "tscontract.cli",
    "tscontract.contract.loader",
    "tscontract.engines.duckdb",
    "tscontract.engines.run",
    "tscontract.plan",
    "tscontract.report.text",
    "duckdb",
    "numpy",
    "pint",
    "sqlglot",
    "lark",
)


def _exit_code(exc: SystemExit) -> int:
    """The exit status the interpreter gives an uncaught SystemExit (Python/pythonrun.c)."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def _run_as_main(args: list[str]) -> int:
    """`python -m tscontract ARGS` in this process; the interpreter's exit code."""
    sys.argv = ["-m", *args]  # _run_module_as_main puts the module's path in argv[0], as -m does
    try:
        runpy._run_module_as_main("tscontract", alter_argv=True)  # type: ignore[attr-defined]
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:  # uncaught: a traceback on stderr and exit 1
        # from runpy's frame on, as the interpreter prints it (this function's frame is not in it)
        if exc.__traceback__ is not None:
            exc.__traceback__ = exc.__traceback__.tb_next
        sys.excepthook(type(exc), exc, exc.__traceback__)
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # non-daemon threads, then atexit, as at exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            code = 120
    return code


def _child(request: dict[str, Any], protocol: tuple[int, int]) -> None:
    """Set up the request's process and run it; never returns (a failed set-up exits 126)."""
    try:
        _set_up(request, protocol)
    except BaseException:  # on the server's stderr; the caller sees 126
        traceback.print_exc()
        os._exit(126)
    os._exit(_run_as_main(request["args"]))


def _set_up(request: dict[str, Any], protocol: tuple[int, int]) -> None:
    for fd in protocol:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()  # TZ of the request, as a fresh interpreter would read it
    sys.path[0] = os.getcwd()  # -m puts the working directory first on the path
    for fd, (path, flags) in enumerate(
        ((os.devnull, os.O_RDONLY), (request["out"], os.O_WRONLY), (request["err"], os.O_WRONLY))
    ):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)


def main() -> None:
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")  # as the entry point sets it
    for name in PRELOAD:
        importlib.import_module(name)
    # the protocol on fds of its own; 0 and 1 on /dev/null and stderr, so that nothing else writes to it
    requests, answers = os.dup(0), os.dup(1)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    with os.fdopen(requests, "r", encoding="utf-8") as reader, os.fdopen(answers, "w", encoding="utf-8") as writer:
        for line in reader:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _child(json.loads(line), (requests, answers))
            _, status = os.waitpid(pid, 0)
            writer.write(json.dumps({"status": status}) + "\n")
            writer.flush()


if __name__ == "__main__":
    main()
