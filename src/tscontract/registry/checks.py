"""The default compatibility check in worker processes.

A check is pure Python (parse every version, resolve every field): run in the server's own
process, checks hold the interpreter lock the event loop needs to answer reads, and use one core
at most. ``ProcessChecks`` runs ``default_compat`` in a small pool of spawned processes instead
(each keeps its own parse cache); a first version or mode NONE needs only a parse and stays in
process. When the pool breaks, the check runs in process rather than failing the request.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from tscontract.registry.schemas import default_compat


def _ready() -> bool:
    return True


def _exit_with_parent(parent: int, interval: float = 0.5) -> None:
    """In a check process: exit as soon as the server that started it is gone (even SIGKILLed, when it
    cannot stop its pool), instead of waiting for work forever as an orphan."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval)
        os._exit(0)

    threading.Thread(target=watch, name="tscontract-parent-watch", daemon=True).start()


class ProcessChecks:
    """A compatibility callable (the registry's ``compat``) backed by ``workers`` processes."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
                self._pool = ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=context,
                    initializer=_exit_with_parent,
                    initargs=(os.getpid(),),
                )
            return self._pool

    def warm(self, timeout: float = 120.0) -> None:
        """Start the workers and wait until they answer, so no request waits for a process to start."""
        pool = self._executor()
        for future in [pool.submit(_ready) for _ in range(self.workers)]:
            future.result(timeout=timeout)

    def __call__(self, mode: str, schema_type: str, new_text: str, olds: list[str]) -> tuple[bool, list[str]]:
        if mode == "NONE" or not olds:
            return default_compat(mode, schema_type, new_text, olds)
        try:
            return self._executor().submit(default_compat, mode, schema_type, new_text, olds).result()
        except BrokenProcessPool:
            with self._lock:
                self._pool = None  # the next check starts a new pool
            return default_compat(mode, schema_type, new_text, olds)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
