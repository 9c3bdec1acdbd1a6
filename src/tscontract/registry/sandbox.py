"""Run schema compilation in child processes with a memory and a time limit.

protoc is C++ inside the server's process: a text it handles badly could take all the memory or
time the server has. ``Sandbox.run(fn, *args)`` runs ``fn`` (a module-level function: it is pickled
by name) in one of a few spawned children whose address space is capped with ``RLIMIT_AS``, and
waits at most ``seconds``: a child that runs out of memory, crashes or overruns is killed and
replaced, and the caller gets ``SandboxLimit`` naming the limit. Children are reused (a spawn costs
a few hundred milliseconds; a round trip to a warm child well under one), started on first use or
by ``warm()``, and exit with the server even when it is SIGKILLed.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from tscontract.registry.checks import _exit_with_parent

MEMORY_BYTES = 512 * 1024 * 1024  # address space of a child; it needs about 75 MB with protoc loaded
SECONDS = 10.0
WORKERS = 2


class SandboxLimit(Exception):
    """The function went over the memory or time limit, or its process died."""


def _serve(conn: Connection, memory: int, parent: int) -> None:
    """A child's loop: receive (fn, args), answer ("ok", value) or ("error", text) or ("memory", "")."""
    import resource

    import tscontract.registry.schemas  # noqa: F401  (loaded before the cap, as every task needs it)

    _exit_with_parent(parent)
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            answer: tuple[str, Any] = ("ok", fn(*args))
        except MemoryError:
            answer = ("memory", "")
        except Exception as exc:
            answer = ("error", f"{type(exc).__name__}: {exc}")
        conn.send(answer)
        if answer[0] == "memory":
            return  # a heap that ran out may be left in any state: start clean


class _Child:
    def __init__(self, memory: int) -> None:
        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
        self.conn, child_end = context.Pipe()
        self.process = context.Process(
            target=_serve, args=(child_end, memory, os.getpid()), name="tscontract-sandbox", daemon=True
        )
        self.process.start()
        child_end.close()

    def kill(self) -> None:
        self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


class Sandbox:
    """At most ``workers`` children at once, each capped at ``memory`` bytes and ``seconds`` per call."""

    def __init__(self, workers: int = WORKERS, memory: int = MEMORY_BYTES, seconds: float = SECONDS) -> None:
        self.memory, self.seconds = memory, seconds
        self._slots = threading.BoundedSemaphore(workers)
        self._idle: queue.LifoQueue[_Child] = queue.LifoQueue()
        self._workers = workers
        self._closed = False

    def warm(self) -> None:
        """Start every child now, so no request waits for one to start."""
        children = [_Child(self.memory) for _ in range(self._workers)]
        for child in children:
            self._idle.put(child)

    def run(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in a child; its exception comes back as RuntimeError('Type: message')."""
        with self._slots:
            try:
                child = self._idle.get_nowait()
            except queue.Empty:
                child = _Child(self.memory)
            try:
                kind, value = self._call(child, fn, args)
            except BaseException:
                child.kill()
                raise
            if kind == "memory" or self._closed:
                child.kill()
            else:
                self._idle.put(child)
        if kind == "memory":
            raise SandboxLimit(f"went over the registry's memory limit of {self.memory // (1024 * 1024)} MiB")
        if kind == "error":
            raise RuntimeError(value)
        return value

    def _call(self, child: _Child, fn: Callable[..., Any], args: tuple) -> tuple[str, Any]:
        try:
            child.conn.send((fn, args))
            if not child.conn.poll(self.seconds):
                raise SandboxLimit(f"went over the registry's time limit of {self.seconds:g} s")
            return child.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            # the child died: protoc aborts when an allocation fails under RLIMIT_AS
            raise SandboxLimit(
                f"went over the registry's memory limit of {self.memory // (1024 * 1024)} MiB (the compiler died)"
            ) from None

    def close(self) -> None:
        self._closed = True
        while True:
            try:
                self._idle.get_nowait().kill()
            except queue.Empty:
                return
