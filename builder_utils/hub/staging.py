"""The export's hidden staging folder: made with a marker, removed on any exit, swept when stale.

An export writes everything into ``OUT/.export-<random>/`` and moves it into place at the end.
The folder holds a marker file naming the process (host, pid, start time), so a later export
can tell a folder left behind by a killed run (``kill -9``, power loss) from another export
still running, and from a user's own folder that happens to share the prefix: only a folder
whose marker names a dead process of this host is removed.

The marker is removed last, so a removal cut short still leaves a folder that is provably ours.

The final moves are journaled: before the first rename, the staging folder receives the list of
moves, the stale files to remove and the new manifest (:func:`write_journal`); :func:`finish`
carries them out and can run again. A staging folder found with a journal was killed while
moving into place: the next export finishes that commit instead of discarding it, so the folder
never keeps half of an export that the manifest does not describe.

Example:
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> staging = make_staging(out)
    >>> is_ours(staging), owner_alive(staging)
    (True, True)
    >>> remove_staging(staging)
    >>> list(out.iterdir())
    []
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from builder_utils.atomic import write_atomic
from builder_utils.hub.manifest import FileRecord, difference, manifest_text, write_manifest

logger = logging.getLogger(__name__)

STAGING_PREFIX = ".export-"
MARKER = ".hub-export-staging"
JOURNAL = ".hub-export-commit.json"


def _start_time(pid: int) -> str | None:
    # Field 22 of /proc/<pid>/stat: the start time, which tells a reused pid from the original.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def make_staging(out: str | os.PathLike) -> Path:
    """A new staging folder inside ``out``, with its marker.

    Example:
        >>> import tempfile
        >>> make_staging(tempfile.mkdtemp()).name.startswith(STAGING_PREFIX)
        True
    """
    staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    owner = {"host": socket.gethostname(), "pid": os.getpid(), "started": _start_time(os.getpid())}
    (staging / MARKER).write_text(json.dumps(owner) + "\n", encoding="utf-8")
    return staging


def _owner(folder: Path) -> dict | None:
    marker = folder / MARKER
    if marker.is_symlink() or not marker.is_file():
        return None
    try:
        owner = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(owner, dict) or not isinstance(owner.get("pid"), int):
        return None
    return owner


def is_ours(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` is an export staging folder (prefix, real folder, readable marker).

    Example:
        >>> is_ours("/tmp")
        False
    """
    folder = Path(folder)
    return folder.name.startswith(STAGING_PREFIX) and folder.is_dir() and not folder.is_symlink() and _owner(folder) is not None


def owner_alive(folder: str | os.PathLike) -> bool:
    """Whether the export that made ``folder`` may still be running (True when unsure).

    Example:
        >>> owner_alive("/nonexistent")
        True
    """
    owner = _owner(Path(folder))
    if owner is None or owner.get("host") != socket.gethostname():
        return True  # another machine's export on a shared file system: not ours to judge
    pid = owner["pid"]
    started = _start_time(pid)
    if started is not None:
        return owner.get("started") in (None, started)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_staging(staging: str | os.PathLike) -> None:
    """Remove a staging folder, its marker last; signals wait until it is gone.

    Example:
        >>> remove_staging("/nonexistent/.export-x")
    """
    staging = Path(staging)
    if not staging.is_dir():
        return
    with signals_deferred():
        for child in staging.iterdir():
            if child.name == MARKER:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
        (staging / MARKER).unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            staging.rmdir()


def write_journal(staging: Path, moves: list[str], stale: list[FileRecord], manifest: dict[str, FileRecord]) -> None:
    """Record the commit :func:`finish` carries out: files to move from ``staging`` (paths
    relative to both folders), our stale files to remove, the manifest to write last.

    Example:
        >>> import tempfile
        >>> staging = Path(tempfile.mkdtemp())
        >>> write_journal(staging, [], [], {})
        >>> sorted(json.loads((staging / JOURNAL).read_text()))
        ['manifest', 'moves', 'stale']
    """
    journal = {
        "moves": moves,
        "stale": [dataclasses.asdict(record) for record in stale],
        "manifest": json.loads(manifest_text(manifest.values()))["files"],
    }
    write_atomic(staging / JOURNAL, json.dumps(journal, indent=1) + "\n")


def finish(staging: Path, out: Path) -> None:
    """Carry out the journaled commit of ``staging`` into ``out``; safe to run again after a cut.

    Moves the files still in ``staging``, removes each stale file while its content is still
    what export wrote (a changed one stays, with a warning), then writes the manifest.

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()); staging = make_staging(out)
        >>> _ = (staging / "a.txt").write_text("ours")
        >>> write_journal(staging, ["a.txt"], [], {})
        >>> finish(staging, out); (out / "a.txt").read_text()
        'ours'
    """
    journal = json.loads((staging / JOURNAL).read_text(encoding="utf-8"))
    for path in journal["moves"]:
        source = staging / path
        if source.is_file() and not source.is_symlink():
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, out / path)
    for entry in journal["stale"]:
        record = FileRecord(**entry)
        reason = difference(out, record)
        if reason is None:
            (out / record.path).unlink()
        elif reason != "missing":
            logger.warning("%s: left in place (%s); it is no longer listed as export's", out / record.path, reason)
    write_manifest(out, {entry["path"]: FileRecord(**entry) for entry in journal["manifest"]})


def sweep_stale_staging(out: str | os.PathLike) -> list[Path]:
    """Remove the staging folders in ``out`` left by exports that died; return them.

    Folders without our marker, or whose export may still run, are left alone. One killed
    while moving into place (it holds a journal) has its commit finished first.

    Example:
        >>> sweep_stale_staging("/nonexistent")
        []
    """
    out = Path(out)
    if not out.is_dir():
        return []
    removed = []
    for folder in sorted(out.glob(STAGING_PREFIX + "*")):
        if is_ours(folder) and not owner_alive(folder):
            if (folder / JOURNAL).is_file():
                logger.warning("%s: finishing the moves of an export killed while moving into place", folder)
                with signals_deferred():
                    finish(folder, out)
            else:
                logger.warning("%s: removing the staging folder of an export that did not finish", folder)
            remove_staging(folder)
            removed.append(folder)
    return removed


def _deliver(handler, signum: int) -> None:
    # Hand a signal to the handler that was in place: a Python handler is called (it raises
    # KeyboardInterrupt or Terminated); the default action is taken for real; ignored stays ignored.
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


_remembered: list[tuple[int, object]] = []


@contextlib.contextmanager
def signals_remembered() -> Iterator[None]:
    """Remember every SIGINT / SIGTERM of the block, so that :func:`raise_missed_signal` can
    raise it again.

    The handler's ``KeyboardInterrupt`` is raised wherever the main thread is, and when that is
    a finaliser (``Dataset.__del__`` during a collection) Python prints "Exception ignored" and
    goes on: the interruption is lost and the export would finish with status 0. Checkpoints in
    the export call :func:`raise_missed_signal`; one that propagated never reaches them.

    Example:
        >>> with signals_remembered():
        ...     raise_missed_signal()     # nothing received: nothing raised
    """
    if threading.current_thread() is not threading.main_thread():
        yield
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
    try:
        yield
    finally:
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
    """Hold SIGINT and SIGTERM until the block is done, then act on the first one received.

    For the few renames that move a finished export into place: an interruption there would
    leave half the new shards next to half the old ones. The held signal is then handled by the
    handler that was in place (``KeyboardInterrupt``, or ``Terminated`` under
    :func:`builder_utils.interrupt.stop_on_signals`). Outside the main thread this does nothing.

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
