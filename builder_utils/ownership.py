"""Data safety by construction: the one module every command writes its outputs through.

Guarantees (the README's "Data safety" section states them with the same words):

1. **A record of what we wrote.** Each output folder holds one record, ``.ownership.json``,
   listing the files our commands wrote there: relative path, size, sha256, and the command
   that wrote it. A file is *ours* only while it is in the record and unchanged since we wrote it.
2. **Only our unchanged files are replaced or removed.** A file at one of our names that is
   not ours is refused (unless the command's ``--overwrite`` says to replace it); a file we
   wrote that was changed since is never removed. A user's file is never removed because it
   sits in a folder of ours. A folder is removed only when it is empty after that.
3. **Staged, then moved into place.** Outputs are written into a hidden staging folder inside
   the output folder and moved into place at the end; an interruption (Ctrl-C, SIGTERM,
   ``kill -9``) or a full disk leaves no half-written output, and a staging folder left by a
   dead process is taken over (finished or removed) by the next run. While the folder is open,
   every SIGINT / SIGTERM is remembered, and one whose exception Python lost on the way (in a
   finaliser, an import) is raised again before the commit: an interrupted run never commits.
4. **Path rules.** Every recorded path and every output flag is checked: relative only, no
   ``..``, no absolute path, no NUL or newline; inside the folder after resolving, and never
   through a symlink. A record that breaks a rule is not ours: it is refused, and named.
5. **Outputs never overlap inputs.** An output that equals, contains or lies inside any input
   of the same command is refused before any work.
6. **One writer per output folder.** An advisory lock (``fcntl.flock``) is held on the output
   folder while a command writes into it; a second writer is refused with a message naming
   the folder. The lock dies with its process, so a killed run never locks out the next one.
7. **One-line errors.** A full disk or a read-only file system is one line naming the path.

The record's format may change: a folder whose record is of an older format (or written by an
earlier version's own mechanism) is refused with a message saying how to re-create it.

Public API (other modules rely on these names):

- :class:`OutputFolder` ``(root, command, *, create=True, single_file=False)``: a context manager taking the lock;
  ``.record`` (path -> :class:`Entry`), ``.is_ours(path)``, ``.difference(entry)``,
  ``.check_target(path, overwrite=False, ours=None)``, ``.staging()``, ``.commit(staging, files,
  *, remove=(), hashes=None, overwrite=False, allow=(), ours=None)``, ``.write_file(path, data, ...)``,
  ``.remove(paths)``, ``.user_files()``, ``.adopt(paths, group=None)``, ``.claim_subfolder(name)``,
  ``.files_under(name)``, ``.writing()`` (a block whose
  full-disk / read-only errors become one line naming the final path), ``.final_path(path)``;
- :class:`Entry` ``(path, size, sha256, command, group=None)``;
- :func:`check_relative` ``(path, where)``, :func:`inside` ``(root, path)``,
  :func:`check_output` ``(path, flag)``, :func:`refuse_overlap` ``(outputs, inputs)``;
- :func:`sha256_of` ``(path)``, :func:`write_error` ``(exc, path)``, :func:`read_record_at`
  ``(folder)``;
- errors: :class:`OwnershipError` (a ``ValueError``; one line naming the path) and its
  subclasses :class:`PathRuleError`, :class:`RecordError`, :class:`BusyError`.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "notes.txt").write_text("the user's")
    >>> with OutputFolder(root, "demo") as out:
    ...     _ = out.write_file("a/report.json", "{}\\n")
    >>> sorted(OutputFolder(root, "demo").read())
    ['a/report.json']
    >>> with OutputFolder(root, "demo") as out:
    ...     out.write_file("notes.txt", "ours")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    builder_utils.ownership.OwnershipError: .../notes.txt: exists and was not written by demo; ...
    >>> check_relative("../v.txt", "index")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    builder_utils.ownership.PathRuleError: index: '../v.txt': ...
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from builder_utils.atomic import write_atomic
from builder_utils.json_input import JSONInputError, load_json, shown_path
from builder_utils.wait_points import wait_point

__all__ = [
    "BusyError", "Entry", "OutputFolder", "OwnershipError", "PathRuleError", "RECORD", "RecordError",
    "STAGING_PREFIX", "check_output", "check_relative", "inside", "read_record_at", "refuse_overlap",
    "sha256_of", "write_error",
]

RECORD = ".ownership.json"
FORMAT = "builder-utils-ownership"
VERSION = 1
STAGING_PREFIX = ".staging-"
MARKER = ".staging-owner"
# Records of the mechanisms this module replaced: a folder holding one is refused with how to re-create it.
OLD_RECORDS = (".hub-export-manifest.json", ".clevr-synth.json", ".clotho-aqa-synth.json",
               ".clevr-math-demo.json", ".clotho-aqa-demo.json")
_HIDDEN = (RECORD, MARKER)
_CHUNK = 1 << 20


class OwnershipError(ValueError):
    """An output that may not be written (not ours, a broken rule, a busy folder); names the path."""


class PathRuleError(OwnershipError):
    """A path breaking the path rules (absolute, ``..``, NUL/newline, through a symlink)."""


class RecordError(OwnershipError):
    """A record that cannot be read or trusted; the message names it and how to re-create the folder."""


class BusyError(OwnershipError):
    """Another command holds the output folder's lock."""


@dataclass(frozen=True)
class Entry:
    """One file we wrote: path relative to the folder, size, sha256, the command and a group
    (the export's configuration, or None). No time stamp: the same run gives the same record."""

    path: str
    size: int
    sha256: str
    command: str
    group: str | None = None


def sha256_of(path: str | os.PathLike) -> str:
    """The hex sha256 of a file, read in 1 MiB chunks.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile() as fh:
        ...     _ = fh.write(b"abc"); fh.flush()
        ...     sha256_of(fh.name)[:12]
        'ba7816bf8f01'
    """
    import hashlib  # here: hashlib loads OpenSSL (~3 ms), which a command that hashes nothing spares

    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _shown(path: object) -> str:
    # newlines in a name would break the one-line error
    return os.fspath(path).replace("\n", "\\n").replace("\r", "\\r") if isinstance(path, (str, os.PathLike)) else repr(path)


def check_relative(path: object, where: str) -> str:
    """``path`` if it is a legal recorded path: a relative POSIX path, no ``..`` or ``.``
    part, no empty part, no NUL or newline; else :class:`PathRuleError` naming ``where``.

    Example:
        >>> check_relative("general/train-00000-of-00001.parquet", "record")
        'general/train-00000-of-00001.parquet'
        >>> check_relative("/etc/hostname", "record")
        Traceback (most recent call last):
        builder_utils.ownership.PathRuleError: record: '/etc/hostname': an absolute path; only paths relative to the folder are ours
    """
    if not isinstance(path, str) or not path:
        raise PathRuleError(f"{where}: {path!r}: not a path")
    if any(c in path for c in "\0\n\r"):
        raise PathRuleError(f"{where}: {path!r}: holds a NUL or newline character")
    if path.startswith("/") or "\\" in path or (len(path) > 1 and path[1] == ":"):
        raise PathRuleError(f"{where}: {path!r}: an absolute path; only paths relative to the folder are ours")
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise PathRuleError(f"{where}: {path!r}: a '..', '.' or empty part; only plain paths inside the folder are ours")
    return path


def inside(root: str | os.PathLike, path: str) -> Path:
    """``root/path`` after the path rules, refusing any part (below ``root``) that is a symlink.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); (root / "link").symlink_to("/etc")
        >>> inside(root, "a/b.txt") == root / "a" / "b.txt"
        True
        >>> inside(root, "link/hostname")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.ownership.PathRuleError: .../link: a symlink; nothing is written or removed through it
    """
    check_relative(path, os.fspath(root))
    current = Path(root)
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            raise PathRuleError(f"{_shown(current)}: a symlink; nothing is written or removed through it")
    return current


def check_output(path: str | os.PathLike, flag: str) -> Path:
    """An output flag's path, checked: no NUL or newline, not a symlink. Returns it as a path.

    Example:
        >>> check_output("out/q.json", "--out")
        PosixPath('out/q.json')
        >>> check_output("a\\nb", "--out")
        Traceback (most recent call last):
        builder_utils.ownership.PathRuleError: --out 'a\\nb': holds a NUL or newline character
    """
    text = os.fspath(path)
    if any(c in text for c in "\0\n\r"):
        raise PathRuleError(f"{flag} {text!r}: holds a NUL or newline character")
    if not text:
        raise PathRuleError(f"{flag}: an empty path")
    path = Path(text)
    if path.is_symlink():
        raise PathRuleError(f"{_shown(path)}: {flag} is a symlink; give the real path (nothing is written through a symlink)")
    return path


def refuse_overlap(outputs: Mapping[str, str | os.PathLike | None], inputs: Mapping[str, str | os.PathLike | None]) -> None:
    """Refuse an output that equals, contains or lies inside an input (symlinks resolved).

    ``outputs`` and ``inputs`` map a flag (``"--out"``) to its path (``None``: not given).

    Example:
        >>> refuse_overlap({"--out": "R/x.csv"}, {"--data_dir": "R"})
        Traceback (most recent call last):
        builder_utils.ownership.OwnershipError: R/x.csv: --out lies inside --data_dir R; choose an output outside every input
        >>> refuse_overlap({"--out": "S"}, {"--data_dir": "R"})
    """
    for out_flag, out in outputs.items():
        if out is None:
            continue
        o = Path(os.path.realpath(out))
        for in_flag, given in inputs.items():
            if given is None:
                continue
            i = Path(os.path.realpath(given))
            if o == i:
                how = "is the same path as"
            elif i.is_relative_to(o):
                how = "contains"
            elif o.is_relative_to(i):
                how = "lies inside"
            else:
                continue
            raise OwnershipError(f"{_shown(out)}: {out_flag} {how} {in_flag} {_shown(given)}; "
                                 "choose an output outside every input")


def write_error(exc: BaseException, path: str | os.PathLike) -> OwnershipError | None:
    """One line for a failed write (full disk, read-only file system, no permission) naming
    ``path``; ``None`` when ``exc`` is not such a failure. Also recognises libsndfile's.

    Example:
        >>> write_error(OSError(errno.ENOSPC, "No space left on device"), "out/a.wav")
        OwnershipError('out/a.wav: cannot write: No space left on device')
    """
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES, errno.EPERM, errno.EFBIG):
        return OwnershipError(f"{_shown(path)}: cannot write: {exc.strerror or os.strerror(exc.errno)}")
    text = str(exc)
    if type(exc).__name__ == "LibsndfileError" or "No space left" in text:
        reason = "No space left on device" if "space" in text.lower() or "write" in text.lower() else text.splitlines()[0]
        return OwnershipError(f"{_shown(path)}: cannot write: {reason}")
    return None


def _entry(data: object, where: str) -> Entry:
    if not isinstance(data, dict):
        raise RecordError(f"{where}: an entry that is not an object; this record is not ours: move it away")
    try:
        entry = Entry(**data)
    except TypeError as exc:
        raise RecordError(f"{where}: a malformed entry ({exc}); this record is not ours: move it away") from None
    check_relative(entry.path, where)
    if (type(entry.size) is not int or not isinstance(entry.sha256, str) or not isinstance(entry.command, str)
            or not (entry.group is None or isinstance(entry.group, str))):
        raise RecordError(f"{where}: entry {entry.path!r} has a malformed size, sha256 or command; move the record away")
    return entry


def _remedy(folder: Path) -> str:
    return (f"move {_shown(folder)} away (or delete what is in it) and run the command again to re-create it, "
            "or give a new output folder")


def read_record_at(folder: str | os.PathLike) -> tuple[dict[str, Entry], dict | None]:
    """The record of ``folder``: (path -> :class:`Entry`, the pending commit or None).

    Absent: ``({}, None)``. A symlink, a folder, malformed content, an older format, an old
    mechanism's record, or an entry breaking the path rules: :class:`RecordError` naming it.

    Example:
        >>> read_record_at("/nonexistent")
        ({}, None)
    """
    folder = Path(folder)
    for old in OLD_RECORDS:
        if os.path.lexists(folder / old):
            raise RecordError(f"{_shown(folder / old)}: written by an earlier version of this package, whose record "
                              f"format changed; {_remedy(folder)}")
    path = folder / RECORD
    if not os.path.lexists(path):
        return {}, None
    if path.is_symlink() or not path.is_file():
        raise RecordError(f"{_shown(path)}: not a regular file, so not our record; move it away")
    where = _shown(path)
    try:
        data = load_json(path, what="record")  # the bounded reader: deep nesting is one line too
    except JSONInputError as exc:
        detail = str(exc).removeprefix(f"{shown_path(path)}: ")
        raise RecordError(f"{where}: cannot read the record ({detail}); {_remedy(folder)}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), list):
        raise RecordError(f"{where}: not a record of this package; {_remedy(folder)}")
    if data.get("version") != VERSION:
        raise RecordError(f"{where}: record format version {data.get('version')!r}, this package reads "
                          f"version {VERSION}; {_remedy(folder)}")
    try:
        entries = {}
        for item in data["files"]:
            entry = _entry(item, where)
            entries[entry.path] = entry
        pending = data.get("pending")
        if pending is not None:
            if (not isinstance(pending, dict) or not isinstance(pending.get("staging"), str)
                    or not all(isinstance(pending.get(key, []), list) for key in ("files", "remove"))):
                raise RecordError(f"{where}: a malformed pending commit; {_remedy(folder)}")
            staging = check_relative(pending["staging"], where)
            if "/" in staging or not staging.startswith(STAGING_PREFIX):
                raise PathRuleError(f"{where}: {staging!r}: not one of our staging folders")
            pending = {"staging": staging,
                       "files": [_entry(item, where) for item in pending.get("files", [])],
                       "remove": [check_relative(p, where) for p in pending.get("remove", [])]}
    except PathRuleError as exc:
        raise RecordError(f"{exc}; the record breaks the path rules, so nothing in it is ours: move it away") from None
    return entries, pending


def _as_dict(entry: Entry) -> dict:
    # by hand: dataclasses.asdict deep-copies, a cost that shows at 70,000 entries
    return {"path": entry.path, "size": entry.size, "sha256": entry.sha256, "command": entry.command,
            "group": entry.group}


def _record_text(entries: Iterable[Entry], pending: dict | None = None) -> str:
    """The record's JSON: sorted, no time stamp (the same run gives the same bytes), one entry a line."""
    lines = [json.dumps(_as_dict(e)) for e in sorted(entries, key=lambda e: e.path)]
    head = f'{{"format": "{FORMAT}", "version": {VERSION},\n'
    if pending is not None:
        head += ' "pending": ' + json.dumps({"staging": pending["staging"],
                                             "files": [_as_dict(e) for e in pending["files"]],
                                             "remove": sorted(pending["remove"])}) + ",\n"
    return head + ' "files": [\n' + ",\n".join(lines) + "\n]}\n"


class OutputFolder:
    """One output folder of ``command`` (e.g. ``"clevr-math synth"``), locked while open.

    ``with OutputFolder(root, command) as out:`` creates ``root`` if needed (removed again at
    exit if it is still empty), takes the lock (:class:`BusyError` if another command holds
    it), finishes or removes what a dead run left (its staging folders, a pending commit),
    and reads the record (:class:`RecordError` if it cannot be trusted). ``root`` must not be
    a symlink or a file.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()) / "out"
        >>> with OutputFolder(root, "x") as out:
        ...     staging = out.staging()
        ...     _ = (staging / "a.txt").write_text("a")
        ...     _ = out.commit(staging, {"a.txt": None})
        ...     out.is_ours("a.txt")
        True
        >>> with OutputFolder(root, "x") as out:
        ...     out.remove(["a.txt"])
        ['a.txt']
        >>> list(root.iterdir())     # an empty record is removed too
        []
    """

    def __init__(self, root: str | os.PathLike, command: str, *, create: bool = True, single_file: bool = False):
        self.root = Path(root)
        self.command = command
        self.create = create
        # A single-file output (a question file in the user's folder) whose content marks it as
        # ours: no record and no folder lock (parallel runs into one folder are usual); each
        # staging folder is still locked by its own process.
        self.single_file = single_file
        self._marker_fds: list[int] = []
        self.record: dict[str, Entry] = {}
        self._fd: int | None = None
        self._created: Path | None = None
        self._stagings: list[Path] = []
        self._signals = contextlib.ExitStack()

    # -- opening and closing ---------------------------------------------------------------

    def read(self) -> dict[str, Entry]:
        """The record, read without the lock (for a check before any work, or a reader like push)."""
        self._check_root()
        self.record, pending = read_record_at(self.root)
        if pending is not None:
            # a commit cut short: what it was moving is not yet known to be ours
            self.record = dict(self.record)
        return self.record

    def _check_root(self) -> None:
        if self.root.is_symlink():
            raise PathRuleError(f"{_shown(self.root)}: the output folder is a symlink; give the real folder "
                                "(nothing is written through a symlink)")
        if self.root.exists() and not self.root.is_dir():
            raise OwnershipError(f"{_shown(self.root)}: exists and is not a folder; give a folder to write into")

    def __enter__(self) -> "OutputFolder":
        self._check_root()
        if not self.root.exists():
            if not self.create:
                raise OwnershipError(f"{_shown(self.root)}: no such folder")
            top = self.root.absolute()
            while not top.parent.exists():
                top = top.parent
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise write_error(exc, self.root) or OwnershipError(
                    f"{_shown(self.root)}: cannot create the output folder ({exc.strerror or exc})") from None
            self._created = top
        from builder_utils.interrupt import signals_remembered

        self._signals.enter_context(signals_remembered())  # for commit's raise_missed_signal
        try:
            if not self.single_file:
                self._lock()
                self.record, pending = read_record_at(self.root)
            else:
                pending = None
            self._take_over(pending)
        except BaseException:
            self._close(failed=True)
            raise
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self._close(failed=kind is not None)

    def _lock(self) -> None:
        fd = os.open(self.root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise BusyError(f"{_shown(self.root)}: another command is writing into this folder; "
                            "wait until it is done, then run again") from None
        except OSError:
            pass  # a file system without flock: the staging and record rules still hold
        self._fd = fd

    def _close(self, failed: bool) -> None:
        for staging in self._stagings:
            _remove_tree(staging)
        self._stagings.clear()
        for fd in self._marker_fds:
            os.close(fd)
        self._marker_fds.clear()
        if self._created is not None:
            # a folder we created and left empty (a failed or empty run) goes again, up to the
            # first folder that existed before
            folder = self.root.absolute()
            while True:
                try:
                    folder.rmdir()
                except OSError:
                    break
                if folder == self._created:
                    break
                folder = folder.parent
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
        self._signals.close()

    def _take_over(self, pending: dict | None) -> None:
        """A staging folder with our marker whose marker lock is free belongs to a dead run:
        finish its pending commit (recorded in our record, never read from the staging folder),
        then remove it. A folder without our marker is someone else's and stays."""
        if pending is not None:
            self._roll_forward(pending, check_staged=True)
        for child in sorted(self.root.glob(STAGING_PREFIX + "*")):
            marker = child / MARKER
            if not child.is_dir() or child.is_symlink() or marker.is_symlink() or not marker.is_file():
                continue
            try:
                fd = os.open(marker, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process is alive (a parallel single-file run): not ours to remove
            finally:
                os.close(fd)
            _remove_tree(child)

    # -- what is ours ----------------------------------------------------------------------

    def difference(self, entry: Entry) -> str | None:
        """Why ``root/entry.path`` is no longer the file we wrote, or None if it still is.

        The type, the size, then the sha256 decide (the content is always compared)."""
        path = self.root / entry.path
        parent = PurePosixPath(entry.path).parent
        try:
            if parent != PurePosixPath("."):
                inside(self.root, parent.as_posix())
        except PathRuleError:
            return f"inside {parent}/, a symlink"
        try:
            stat = path.lstat()
        except FileNotFoundError:
            return "missing"
        if path.is_symlink():
            real = Path(os.path.realpath(path))
            if not real.is_relative_to(Path(os.path.realpath(self.root))):
                return f"a symlink leaving the folder (to {_shown(real)})"
            return "a symlink, not the file we wrote"
        if not path.is_file():
            return "not a regular file"
        if stat.st_size != entry.size:
            return f"size changed since {entry.command} wrote it ({stat.st_size:,} bytes, it wrote {entry.size:,})"
        if sha256_of(path) != entry.sha256:
            return f"content changed since {entry.command} wrote it"
        return None

    def is_ours(self, path: str) -> bool:
        """Whether ``path`` is in the record and unchanged since we wrote it."""
        entry = self.record.get(path)
        return entry is not None and self.difference(entry) is None

    def user_files(self) -> list[str]:
        """Paths (relative, sorted) of files in the folder that are not ours: not in the record,
        or changed. Our record, lock and staging folders are not counted."""
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = Path(dirpath).relative_to(self.root)
            if rel_dir == Path("."):
                dirnames[:] = [d for d in dirnames if not d.startswith(STAGING_PREFIX)]
                filenames = [f for f in filenames if f not in _HIDDEN]
            for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                rel = (rel_dir / name).as_posix()
                if not self.is_ours(rel):
                    found.append(rel)
        return sorted(found)

    def check_target(self, path: str, overwrite: bool = False, ours: Callable[[Path], bool] | None = None,
                     _checked: set | None = None) -> Path:
        """``root/path`` if we may write it: absent, or ours (recorded and unchanged, or
        ``ours(path)`` says its content marks it as ours), or (``overwrite``) a regular file of
        someone else's. A symlink, a folder, or a symlinked parent is always refused."""
        check_relative(path, _shown(self.root))
        parts = path.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if _checked is not None and parent in _checked:
                continue
            folder = os.path.join(self.root, parent)
            if os.path.islink(folder) or (os.path.exists(folder) and not os.path.isdir(folder)):
                raise OwnershipError(f"{_shown(folder)}: {self.command} writes its folder {parent}/ there and this is "
                                     "a symlink or a file; move it away")
            if _checked is not None:
                _checked.add(parent)
        target = self.root / path
        if not os.path.lexists(os.path.join(self.root, path)):
            return target
        if target.is_symlink() or not target.is_file():
            raise OwnershipError(f"{_shown(target)}: not a regular file (a symlink or a folder); it is left alone: "
                                 "move it away")
        if self.is_ours(path) or overwrite or (ours is not None and ours(target)):
            return target
        entry = self.record.get(path)
        why = (self.difference(entry) if entry is not None else None) or f"was not written by {self.command}"
        raise OwnershipError(f"{_shown(target)}: exists and {why}; it is never replaced without --overwrite: "
                             "move it away, or give another output")

    def claim_subfolder(self, name: str) -> Path:
        """``root/name`` for a command that writes a sub-folder (a demo's world, cache, export):
        refused when it exists and is not ours: a symlink or a file, or a folder holding files
        without a record of ours in it and without files of this folder's record under it."""
        path = inside(self.root, name)
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise OwnershipError(f"{_shown(path)} already exists and was not created by {self.command}; it is never "
                                 "replaced: move it away, or choose another --out folder")
        if path.is_dir() and any(path.iterdir()):
            # ours when it, or one of its folders (an evaluation per configuration), holds our record
            recorded = False
            for folder in [path, *(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())]:
                try:
                    recorded = recorded or bool(read_record_at(folder)[0])
                except RecordError:
                    pass
            if not recorded and not any(p.startswith(name + "/") for p in self.record):
                raise OwnershipError(
                    f"{_shown(path)} already exists and was not created by {self.command}; it is never replaced. "
                    "Choose another --out folder (a new or empty one), or move it away")
        return path

    def files_under(self, name: str) -> set[str]:
        """Relative paths of the files now under the sub-folder ``name`` (for :meth:`adopt`)."""
        base = inside(self.root, name)
        return {p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file() and not p.is_symlink()}

    # -- writing ---------------------------------------------------------------------------

    def staging(self) -> Path:
        """A new staging folder inside the output folder (removed when the folder is closed)."""
        if self._fd is None and not self.single_file:
            raise OwnershipError(f"{_shown(self.root)}: open the output folder (with OutputFolder(...)) before staging")
        try:
            staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.root))
            (staging / MARKER).write_text(json.dumps({"pid": os.getpid(), "command": self.command}) + "\n")
            # held until the folder is closed: the lock dies with the process, so the next run
            # can tell a dead run's staging folder from a live one
            fd = os.open(staging / MARKER, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._marker_fds.append(fd)
        except OSError as exc:
            raise write_error(exc, self.root) or OwnershipError(
                f"{_shown(self.root)}: cannot write into the output folder ({exc.strerror or exc})") from None
        self._stagings.append(staging)
        wait_point("staging")
        return staging

    def final_path(self, path: str | os.PathLike) -> Path:
        """The path a staged file will have once moved into place (``path`` itself otherwise)."""
        path = Path(path)
        for staging in self._stagings:
            if path.is_relative_to(staging):
                return self.root / path.relative_to(staging)
        return path

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Turn a full disk, a read-only file system or a denied write inside the block into one
        :class:`OwnershipError` naming the output's final path (never the hidden staging name)."""
        try:
            yield
        except (OSError, RuntimeError) as exc:
            filename = getattr(exc, "filename", None)
            error = write_error(exc, self.final_path(filename) if filename else self.root)
            if error is None:
                raise
            raise error from None

    def _write_record(self, entries: Iterable[Entry], pending: dict | None = None) -> None:
        if self.single_file:
            return
        entries = list(entries)
        if not entries and pending is None:
            (self.root / RECORD).unlink(missing_ok=True)  # nothing of ours left: no record either
            return
        text = _record_text(entries, pending)
        try:
            write_atomic(self.root / RECORD, text)
        except OSError as exc:
            raise write_error(exc, self.root / RECORD) or exc

    def commit(
        self,
        staging: Path,
        files: Mapping[str, str | None],
        *,
        remove: Iterable[str] = (),
        hashes: Mapping[str, str] | None = None,
        overwrite: bool = False,
        allow: Iterable[str] = (),
        ours: Callable[[Path], bool] | None = None,
    ) -> dict[str, Entry]:
        """Move ``files`` (relative path -> group) from ``staging`` into the folder and record
        them; remove the paths of ``remove`` that are ours (unchanged), and folders left empty.

        Every target is checked first (:meth:`check_target`; ``allow``: paths the caller
        checked itself, e.g. a hand-edited card it merged); a refusal changes nothing. The
        commit is written into the record before the first move, so a run killed in the middle
        is finished by the next one. ``hashes``: sha256 already computed (path -> hex).
        Returns the new entries.
        """
        from builder_utils.interrupt import raise_missed_signal, signals_deferred

        allowed = set(allow)
        checked: set[str] = set()  # parent folders already checked (70,000 images share two)
        for path in files:
            if path in allowed:
                inside(self.root, path)
            else:
                self.check_target(path, overwrite, ours, _checked=checked)
        hashes = dict(hashes or {})
        entries = []
        base = os.fspath(staging)
        for path, group in sorted(files.items()):
            source = os.path.join(base, path)
            size = os.stat(source).st_size
            sha = hashes.get(path) or ("" if self.single_file else sha256_of(source))
            entries.append(Entry(path, size, sha, self.command, group))
        removable = sorted(p for p in set(remove) - set(files) if p in self.record)
        pending = {"staging": staging.name, "files": entries, "remove": removable}
        wait_point("commit")
        raise_missed_signal()  # the point of no return: a run whose interruption was lost must not commit
        self._write_record(self.record.values(), pending)
        with signals_deferred():
            self._roll_forward(pending, check_staged=False)
        wait_point("committed")
        return {e.path: e for e in entries}

    def _roll_forward(self, pending: dict, check_staged: bool) -> None:
        """Carry out a pending commit (again, after a cut): move each staged file whose size and
        sha256 are the pending entry's; remove each path of ``remove`` that is still ours; then
        record the result. A staged file that does not match is never moved."""
        staging = self.root / pending["staging"]
        done: dict[str, Entry] = dict(self.record)
        if staging.is_symlink():
            staging = self.root / ".staging-not-followed"  # its files are never moved
        made: set[str] = set()  # folders known to exist and checked (no symlink on the way)
        for entry in pending["files"]:
            source = os.path.join(staging, entry.path)
            target = os.path.join(self.root, entry.path)
            if os.path.isfile(source) and not os.path.islink(source) and (
                    not check_staged or (os.stat(source).st_size == entry.size and sha256_of(source) == entry.sha256)):
                parent = os.path.dirname(entry.path)
                if parent not in made:
                    try:
                        if parent:
                            inside(self.root, parent)
                    except PathRuleError:
                        continue
                    os.makedirs(os.path.join(self.root, parent), exist_ok=True)
                    made.add(parent)
                if os.path.lexists(target) and (os.path.islink(target) or not os.path.isfile(target)):
                    continue
                os.replace(source, target)
                done[entry.path] = entry
                wait_point("commit-move")  # the test suite's kill -9 inside the commit
            elif check_staged and self.difference(entry) is None:
                done[entry.path] = entry  # moved before the cut
            elif entry.path in done and self.difference(done[entry.path]) is not None:
                del done[entry.path]  # neither the old nor the new file: not ours any more
        for path in pending["remove"]:
            entry = done.get(path)
            if entry is not None and self.difference(entry) in (None, "missing"):
                self._unlink(path)
                del done[path]
        self.record = done
        self._write_record(done.values())

    def _unlink(self, path: str) -> None:
        target = inside(self.root, path)
        target.unlink(missing_ok=True)
        folder = target.parent
        while folder != self.root and folder.is_dir() and not folder.is_symlink():
            try:
                folder.rmdir()  # only when empty
            except OSError:
                break
            folder = folder.parent

    def remove(self, paths: Iterable[str]) -> list[str]:
        """Remove the given paths that are ours (recorded, unchanged) and record it; folders left
        empty go too. A changed or foreign file stays. Returns the paths removed."""
        removed = []
        for path in sorted(set(paths)):
            entry = self.record.get(path)
            if entry is not None and self.difference(entry) in (None, "missing"):
                self._unlink(path)
                removed.append(path)
        if removed:
            self.record = {p: e for p, e in self.record.items() if p not in removed}
            self._write_record(self.record.values())
        return removed

    def adopt(self, paths: Iterable[str], group: str | None = None) -> None:
        """Record files a library wrote in place under the lock (a build cache); files already
        there before are the caller's to exclude."""
        for path in paths:
            target = inside(self.root, path)
            stat = target.stat()
            self.record[path] = Entry(path, stat.st_size, sha256_of(target), self.command, group)
        self._write_record(self.record.values())

    def write_file(self, path: str, data: str | bytes, *, overwrite: bool = False, group: str | None = None) -> Path:
        """Write one file (text as UTF-8, or bytes) through staging and record it; returns its path."""
        self.check_target(path, overwrite)
        staging = self.staging()
        source = staging / path
        source.parent.mkdir(parents=True, exist_ok=True)
        try:
            source.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        except OSError as exc:
            raise write_error(exc, self.root / path) or exc
        self.commit(staging, {path: group}, overwrite=overwrite)
        _remove_tree(staging)
        self._stagings.remove(staging)
        return self.root / path


def _remove_tree(folder: Path) -> None:
    """Remove a staging folder, its marker last (a removal cut short still leaves it ours)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    for child in folder.iterdir():
        if child.name == MARKER:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
    (folder / MARKER).unlink(missing_ok=True)
    try:
        folder.rmdir()
    except OSError:
        pass
