"""Stop cleanly on SIGINT and SIGTERM: one rule for every command of the package.

SIGTERM is what ``timeout``, SLURM, docker and a closing terminal send. Python's default reaction
to it is to die at once, skipping every ``finally`` block and context manager, which is how a
killed run used to leave hidden temporary files, staging folders and orphaned worker processes
behind. Inside :func:`stop_on_signals`, SIGTERM raises :class:`Terminated` (a subclass of
``KeyboardInterrupt``) in the main thread instead, so the same cleanup code that handles Ctrl-C
runs: :func:`builder_utils.atomic.atomic_output` removes its temporary file, a ``with Pool()``
block terminates its workers, a staging folder's ``finally`` removes it.

A command's ``main`` then reports the interruption as one line and the conventional exit status
(130 for SIGINT, 143 for SIGTERM) through :func:`exit_status`.

Example:
    >>> import os, signal
    >>> with stop_on_signals():
    ...     try:
    ...         os.kill(os.getpid(), signal.SIGTERM)
    ...     except Terminated as stop:
    ...         print(exit_status(stop))
    143
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Terminated", "exit_status", "stop_on_signals"]


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when the process receives SIGTERM inside :func:`stop_on_signals`."""

    signum = signal.SIGTERM


def _raise_terminated(signum, frame):
    raise Terminated(f"terminated by signal {signum}")


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Turn SIGTERM into :class:`Terminated` for the duration of the block.

    SIGINT already raises ``KeyboardInterrupt``. The previous SIGTERM handler is restored on
    exit. Outside the main thread (where Python allows no signal handlers) this does nothing.

    Example:
        >>> with stop_on_signals():
        ...     pass
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_status(stop: BaseException) -> int:
    """The shell's exit status for an interrupted command: 128 + the signal number.

    Example:
        >>> exit_status(KeyboardInterrupt())
        130
        >>> exit_status(Terminated())
        143
    """
    return 128 + int(getattr(stop, "signum", signal.SIGINT))
