"""Named points where a command can be made to wait, so that the test suite interrupts it at a
chosen moment by construction rather than by timing.

A command calls :func:`wait_point` at a few moments worth interrupting (a staging folder made,
the commit begun, a file moved into place, a shard written, a Dask cluster starting). Unless the
environment asks for that point, the call costs one comparison. The test harness sets:

- ``BUILDER_UTILS_WAIT_AT``: the point's name, ``NAME`` or ``NAME@N`` (the N-th time one process
  reaches it; default the first);
- ``BUILDER_UTILS_WAIT_DIR``: a folder where the process that reaches it first creates
  ``NAME.waiting`` (holding its pid) and then waits, until that file is removed or a signal
  ends the wait (Ctrl-C and SIGTERM raise as anywhere else). Other processes pass on.

The harness waits for the file, sends its signal (or ``kill -9``), then removes the file: a
wait inside a block that holds signals back (the moves of a commit) then goes on, and the held
signal is acted on where it would have been. The wait gives up after :data:`WAIT_LIMIT` seconds,
so that a forgotten variable cannot hang a run for good.

Example:
    >>> wait_point("commit")   # not asked for: returns at once
"""

from __future__ import annotations

import os
import time

__all__ = ["WAIT_AT", "WAIT_DIR", "WAIT_LIMIT", "wait_point"]

WAIT_AT = "BUILDER_UTILS_WAIT_AT"
WAIT_DIR = "BUILDER_UTILS_WAIT_DIR"
WAIT_LIMIT = 600.0

# Read once: points sit in loops (a question written, a file moved) and must cost nothing.
_wanted = os.environ.get(WAIT_AT)
_name, _, _nth = (_wanted or "").partition("@")
_target = int(_nth) if _nth.isdigit() else 1
_reached = 0


def wait_point(name: str) -> None:
    """Wait here if the environment names this point (see the module docstring); else return."""
    global _reached
    if name != _name:
        return
    _reached += 1
    if _reached != _target:
        return
    folder = os.environ.get(WAIT_DIR)
    if not folder:
        return
    marker = os.path.join(folder, f"{name}.waiting")
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return  # another process of the run waits there
    with os.fdopen(fd, "w") as fh:
        fh.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + WAIT_LIMIT
    while os.path.exists(marker) and time.monotonic() < deadline:
        time.sleep(0.005)
