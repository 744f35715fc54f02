"""Run independent tasks in one process, a process pool or a Dask cluster; results in task order.

A task's result depends only on the task (balancing windows, per-scene seeds), so where it runs
never changes the output; a task whose Dask worker dies is recomputed elsewhere with the same
result. Workers never act on Ctrl-C: only this process decides, so an interrupt prints one line,
not a traceback per worker. At most ``lookahead`` tasks run ahead of the one being consumed.

Example:
    >>> list(ordered_map(abs, [(-1,), (2,), (-3,)], num_workers=2))
    [1, 2, 3]
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import tempfile
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from builder_utils.wait_points import wait_point

__all__ = ["DASK_EXTRA", "DaskUnavailable", "LOCAL_CLUSTER_CONFIG", "dask_client", "in_this_process", "local_cluster",
           "ordered_map", "require_dask"]

logger = logging.getLogger(__name__)

DASK_EXTRA = "pip install 'clevr-clotho-qa[dask]'"
# Attempts beyond the first for a task that raised or whose worker was lost.
TASK_RETRIES = 3

# Housekeeping of a LocalCluster we start ourselves. Dask's defaults sample every worker's stack
# every 10 ms (the profiler behind the dashboard we do not start) and wake every process 50
# times a second (the event-loop tick), which costs ~0.19 of a core on an idle 2-worker cluster:
# on a 2-core machine, a tenth of the work. Measured with these settings: ~0.02 of a core.
# The memory monitor still runs, once a second, so a runaway worker is still paused or restarted.
LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


class DaskUnavailable(ImportError):
    """``--dask`` was asked for but ``dask.distributed`` is not installed."""


def require_dask():
    """Import and return ``distributed``, or raise :class:`DaskUnavailable` naming the extra.

    Example:
        >>> try:
        ...     found = require_dask().Client is not None
        ... except DaskUnavailable as missing:
        ...     found = "[dask]" in str(missing)
        >>> found
        True
    """
    try:
        import distributed
    except ImportError as exc:
        raise DaskUnavailable(f"--dask needs dask.distributed, which is not installed: {DASK_EXTRA} "
                              f"({exc})") from None
    return distributed


def _scratch_cluster(distributed) -> type:
    """``LocalCluster`` whose ``close`` also removes the scratch folder it was given."""

    class ScratchCluster(distributed.LocalCluster):
        scratch: str = ""

        def close(self, *args, **kwargs):
            try:
                return super().close(*args, **kwargs)
            finally:
                shutil.rmtree(self.scratch, ignore_errors=True)

    return ScratchCluster


def local_cluster(num_workers: int = 2) -> Any:
    """A new ``distributed.LocalCluster`` of single-threaded workers, light housekeeping
    (:data:`LOCAL_CLUSTER_CONFIG`) and a scratch folder of its own, removed when the caller closes it.

    Example (prose, a cluster takes seconds to start)::

        cluster = local_cluster(2)
        try:
            print(cluster.scheduler_address)    # tcp://127.0.0.1:...
        finally:
            cluster.close()
    """
    distributed = require_dask()
    import dask

    if num_workers < 1:
        raise ValueError(f"--num_workers must be at least 1, got {num_workers}")
    # No dashboard (it needs bokeh, and nobody watches a test run); the scheduler's small HTTP
    # server (health checks) still starts: on a free port of this host only, not on 0.0.0.0:8787,
    # which a second cluster would find taken. The nannies hand the configuration in force to the
    # worker processes they spawn.
    from builder_utils.ownership import declare_scratch

    with _signals_deferred() as deferred:
        ours = {"temporary-directory": tempfile.mkdtemp(prefix="dask-scratch-"),
                "distributed.worker.multiprocessing-method": _start_method_without_sigint()}
        # both outlive a kill -9: named to the command's output folder, whose re-run removes them
        declare_scratch(ours["temporary-directory"])
        if ours["distributed.worker.multiprocessing-method"] == "forkserver":
            from multiprocessing import util

            declare_scratch(util.get_temp_dir())  # the fork server's socket folder (pymp-*)
        wait_point("dask-cluster-starting")
        try:
            with dask.config.set({**LOCAL_CLUSTER_CONFIG, **ours}):
                cluster = _scratch_cluster(distributed)(
                    n_workers=num_workers, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                    scheduler_kwargs={"dashboard": False}, silence_logs=logging.ERROR)
        except BaseException:
            shutil.rmtree(ours["temporary-directory"], ignore_errors=True)
            raise
        cluster.scratch = ours["temporary-directory"]
    if deferred:  # Ctrl-C or SIGTERM while it started: close it, then act on the signal
        cluster.close()
        deferred.deliver()
    return cluster


class _Deferred(list):
    """The signals that arrived during :func:`_signals_deferred`, with the handlers they missed."""

    handlers: dict

    def deliver(self) -> None:
        """Run the first missed signal's handler (Ctrl-C: raises ``KeyboardInterrupt``)."""
        handler = self.handlers[self[0]]
        if callable(handler):
            handler(self[0], None)


@contextmanager
def _signals_deferred() -> Iterator[_Deferred]:
    """Record SIGINT and SIGTERM during the block: a cluster left half-built fails to close at
    exit, with a traceback. Outside the main thread (no handler can be set), nothing changes."""
    import threading

    deferred = _Deferred()
    deferred.handlers = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            deferred.handlers[signum] = signal.signal(signum, lambda signum, frame: deferred.append(signum))
    try:
        yield deferred
    finally:
        for signum, handler in deferred.handlers.items():
            signal.signal(signum, handler)


def _start_method_without_sigint() -> str:
    """``forkserver``, its server started now with SIGINT ignored, a state each forked worker
    (restarted ones too) inherits; ``spawn`` outside the main thread, where no handler can be set.
    SIGINT is blocked meanwhile, so a Ctrl-C of these milliseconds is raised afterwards, not lost.
    """
    import threading
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        return "spawn"
    _short_socket_folder()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return "forkserver"


# Linux binds no AF_UNIX socket whose path has 108 bytes or more.
_SOCKET_PATH_LIMIT = 107


def _short_socket_folder() -> None:
    """Make multiprocessing's temporary folder under ``/tmp`` when the usual one is too deep for a socket.

    Under a deep ``TMPDIR`` the fork server's ``pymp-*/listener-*`` fails with "AF_UNIX path too
    long". multiprocessing makes that folder once, on first use; made here first, the rest of
    the run keeps the user's ``TMPDIR``.
    """
    from multiprocessing import util

    socket_path = os.path.join(tempfile.gettempdir(), "pymp-" + "x" * 8, "listener-" + "x" * 8)
    if len(os.fsencode(socket_path)) <= _SOCKET_PATH_LIMIT or not os.access("/tmp", os.W_OK | os.X_OK):
        return
    saved = tempfile.tempdir
    tempfile.tempdir = "/tmp"
    try:
        util.get_temp_dir()  # created now under /tmp, then kept by multiprocessing for the process
    finally:
        tempfile.tempdir = saved


@contextmanager
def dask_client(address: str, num_workers: int = 2) -> Iterator[Any]:
    """A ``distributed.Client`` on a new :func:`local_cluster` (``"local"``) or at ``address``.

    Example (prose, a cluster takes seconds to start)::

        with dask_client("local", num_workers=2) as client:
            print(sum(client.nthreads().values()))      # 2
    """
    distributed = require_dask()
    if address == "local":
        cluster = local_cluster(num_workers)
        try:
            with distributed.Client(cluster) as client:
                wait_point("dask-cluster-up")
                yield client
        finally:
            cluster.close()
        return
    with distributed.Client(address, timeout="30s") as client:
        wait_point("dask-cluster-up")
        yield client


def _pool_worker_signals() -> None:
    # Ctrl-C reaches the whole process group: only the parent decides what happens then.
    # SIGTERM (from Pool.terminate) kills an idle worker at once (the default action): a handler
    # that raises could land in a __del__ or a gc callback, where Python swallows the exception,
    # and the worker would then wait forever on the task queue whose lock the terminating pool
    # holds (seen as a rare hang of the test suite).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


_terminated = False


def _exit_on_sigterm(signum, frame):
    global _terminated
    _terminated = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise SystemExit(128 + signum)


def _run_task(fn: Callable[..., Any], task: tuple) -> Any:
    """Run one task in a pool worker; a SIGTERM meanwhile unwinds it, so its temporary files go."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        return fn(*task)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if _terminated:
            # the SystemExit may have been swallowed (see above): leave now, cleanup has run
            os._exit(128 + signal.SIGTERM)


def in_this_process(num_tasks: int, *, num_workers: int = 1, dask: str | None = None, client: Any = None) -> bool:
    """Whether :func:`ordered_map` runs the tasks here, in a plain loop (no result to pack).

    Example:
        >>> in_this_process(8), in_this_process(8, num_workers=2), in_this_process(1, num_workers=2)
        (True, False, True)
    """
    return client is None and dask is None and (num_workers <= 1 or num_tasks <= 1)


def ordered_map(
    fn: Callable[..., Any],
    tasks: Sequence[tuple],
    *,
    num_workers: int = 1,
    dask: str | None = None,
    lookahead: int | None = None,
    client: Any = None,
) -> Iterator[Any]:
    """Yield ``fn(*task)`` for each task, in task order.

    ``fn`` must be module-level and the tasks picklable; ``lookahead`` defaults to twice the workers.

    Example:
        >>> list(ordered_map(pow, [(2, 3), (3, 2)], num_workers=1))
        [8, 9]
    """
    tasks = list(tasks)
    if client is not None:
        yield from _dask_map(client, fn, tasks, lookahead)
    elif dask is not None:
        with dask_client(dask, num_workers) as opened:
            yield from _dask_map(opened, fn, tasks, lookahead)
    elif in_this_process(len(tasks), num_workers=num_workers):
        for task in tasks:
            yield fn(*task)
    else:
        yield from _pool_map(fn, tasks, min(num_workers, len(tasks)), lookahead)


def _pool_map(fn, tasks, num_workers, lookahead) -> Iterator[Any]:
    from multiprocessing import get_context

    ahead = lookahead or 2 * num_workers
    # The platform's default start method (fork on Linux: no re-import of the caller's main).
    pool = get_context().Pool(num_workers, initializer=_pool_worker_signals)
    pending: deque = deque()
    try:
        todo = iter(tasks)
        for task in todo:
            pending.append(pool.apply_async(_run_task, (fn, task)))
            if len(pending) > ahead:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()
        pool.close()
    finally:
        # terminate(), not close(): an interrupted or failed run must not wait for queued tasks.
        pool.terminate()
        pool.join()


def _dask_map(client, fn, tasks, lookahead) -> Iterator[Any]:
    def ahead() -> int:
        # Asked again as results arrive: workers of an adaptive or jobqueue cluster join late.
        # Results wait on the workers until fetched, so a long lookahead costs the client nothing.
        return lookahead or 2 * max(sum(client.nthreads().values()), 1)

    limit = ahead()
    import uuid  # only here: with platform, ~4 ms of start-up that an in-process run never needs

    run = uuid.uuid4().hex[:8]
    name = getattr(fn, "__name__", "task")
    pending: deque = deque()

    def submit(k: int, task: tuple):
        return client.submit(fn, *task, key=f"{name}-{run}-{k}", pure=False, retries=TASK_RETRIES)

    try:
        for k, task in enumerate(tasks):
            pending.append(submit(k, task))
            if len(pending) > limit:
                future = pending.popleft()
                yield future.result()
                future.release()
                if k % 16 == 0:
                    limit = ahead()
        while pending:
            future = pending.popleft()
            yield future.result()
            future.release()
    finally:
        if pending:
            client.cancel(list(pending), force=True)
            logger.debug("cancelled %d pending Dask tasks (pid %d)", len(pending), os.getpid())
