"""Named points where a command can be made to wait, so the test suite interrupts it by construction, not timing.

``BUILDER_UTILS_WAIT_AT=NAME[@N]`` names the point (its N-th reach in a process); the first
process there writes its pid to ``$BUILDER_UTILS_WAIT_DIR/NAME.waiting`` and waits until the
file is removed, so the harness signals it first and a block holding signals back acts on them
where it would have. :data:`WAIT_LIMIT` keeps a forgotten variable from hanging a run.

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
