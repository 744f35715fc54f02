"""Stop cleanly on SIGINT and SIGTERM: one rule for every command of the package.

SIGTERM (``timeout``, SLURM, docker, a closing terminal) by default kills at once, skipping every
``finally``: killed runs left temporary files, staging folders and orphaned workers. Here it
raises :class:`Terminated` (a ``KeyboardInterrupt``), so Ctrl-C's cleanup runs for it too.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Terminated", "exit_status", "raise_missed_signal", "signals_deferred", "signals_remembered", "stop_on_signals"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM inside :func:`stop_on_signals`."""

    signum = signal.SIGTERM


def _raise_terminated(signum, frame):
    raise Terminated(f"terminated by signal {signum}")


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` for the block, and remember every signal (:func:`signals_remembered`).

    Outside the main thread (where Python allows no signal handlers) this does nothing.

    Example:
        >>> with stop_on_signals():
        ...     try:
        ...         os.kill(os.getpid(), signal.SIGTERM)
        ...     except Terminated as stop:
        ...         print(exit_status(stop))
        143
    """
    if threading.current_thread() is not threading.main_thread() or _remembering:
        yield  # nested (a command's subcommand): the outer block's handlers and memory serve both
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        with signals_remembered():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_status(stop: BaseException) -> int:
    """The shell's exit status for an interrupted command: 128 + the signal number.

    Example:
        >>> exit_status(Terminated())
        143
    """
    return 128 + int(getattr(stop, "signum", signal.SIGINT))


def _deliver(handler, signum: int) -> None:
    # Hand a signal to the handler that was in place: a Python handler is called (it raises
    # KeyboardInterrupt or Terminated); the default action is taken for real; ignored stays ignored.
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


_remembered: list[tuple[int, object]] = []
_remembering: list[bool] = []  # non-empty while a signals_remembered block is active


@contextlib.contextmanager
def signals_remembered() -> Iterator[None]:
    """Remember every SIGINT / SIGTERM of the block, so that :func:`raise_missed_signal` can raise it again.

    Python drops a handler's exception raised in a finaliser (``Dataset.__del__``), an import
    lock's callback or a C extension's init, and the run would end with status 0. So the
    :class:`~builder_utils.ownership.OutputFolder` commit raises it again: an interrupted run never
    commits (not at the block's end: the command's own handler may have reported it already).

    Example:
        >>> with signals_remembered():
        ...     raise_missed_signal()     # nothing received: nothing raised
    """
    if threading.current_thread() is not threading.main_thread() or _remembering:
        yield  # an outer block already remembers (a command, its output folder): one memory for all
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.getsignal(signum) for signum in signals}

    def remember(signum, frame):
        _remembered.append((signum, previous[signum]))
        _deliver(previous[signum], signum)

    hook = sys.unraisablehook

    def quiet(unraisable):
        # The swallowed interruption is raised again at the next checkpoint: its "Exception
        # ignored" traceback would only bury the one-line message of the command.
        if not (isinstance(unraisable.exc_type, type) and issubclass(unraisable.exc_type, KeyboardInterrupt)):
            hook(unraisable)

    for signum in signals:
        signal.signal(signum, remember)
    sys.unraisablehook = quiet
    _remembering.append(True)
    try:
        yield
    finally:
        _remembering.clear()
        sys.unraisablehook = hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _remembered.clear()


def raise_missed_signal() -> None:
    """Raise again a signal received inside :func:`signals_remembered` (see there).

    Example:
        >>> raise_missed_signal()
    """
    if _remembered:
        signum, handler = _remembered[0]
        _deliver(handler, signum)


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """Hold SIGINT and SIGTERM until the block is done, then hand the first one to the previous handler.

    For the renames that move a finished export into place: an interruption there would leave
    half the new shards next to half the old ones.

    Example:
        >>> seen = []
        >>> previous = signal.signal(signal.SIGTERM, lambda signum, frame: seen.append("handled"))
        >>> with signals_deferred():
        ...     os.kill(os.getpid(), signal.SIGTERM)
        ...     seen.append("block done")
        >>> seen
        ['block done', 'handled']
        >>> _ = signal.signal(signal.SIGTERM, previous)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda signum, frame: received.append(signum)) for signum in signals}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if received:
            _deliver(previous[received[0]], received[0])
