"""Data safety by construction: the one module every command writes its outputs through.

The guarantees: README, "Data safety"; the protocol: :meth:`OutputFolder.open`. Moves go through
folders held open (``O_NOFOLLOW | O_DIRECTORY``, ``dir_fd``). Readers (push, a builder) use
:func:`read_record` and :func:`changed`.

Example:
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "notes.txt").write_text("the user's")
    >>> with OutputFolder.open(root, command="demo") as out:
    ...     _ = (out.stage / "report.json").write_text("{}\\n")
    ...     out.add(["report.json"])
    >>> sorted(read_record(root)[0])
    ['report.json']
    >>> with OutputFolder.open(root, command="demo") as out:
    ...     out.check("notes.txt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    builder_utils.ownership.OwnershipError: .../notes.txt: exists and was not written by demo; ...
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shutil
import stat as stat_kind
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from builder_utils.atomic import write_atomic
from builder_utils.json_input import JSONInputError, load_json, shown_path
from builder_utils.wait_points import wait_point

__all__ = [
    "BusyError", "Entry", "OVERWRITE_HELP", "OutputFolder", "OwnershipError", "PathRuleError", "RECORD", "RecordError",
    "changed", "declare_scratch", "open_recorded", "read_record", "sha256_of",
]

RECORD = ".ownership.json"
FORMAT = "builder-utils-ownership"
VERSION = 1
STAGING_PREFIX = ".staging-"
MARKER = ".staging-owner"
_REPLACED = ".replaced"  # inside a staging folder: the files a commit replaced, until it is done
# Records of the mechanisms this module replaced: a folder holding one is refused with how to re-create it.
OLD_RECORDS = (".hub-export-manifest.json", ".clevr-synth.json", ".clotho-aqa-synth.json",
               ".clevr-math-demo.json", ".clotho-aqa-demo.json")
_HIDDEN = (RECORD, MARKER)
# Scratch folders a command makes outside its staging (a Dask cluster's, multiprocessing's socket
# folder), named by their makers (declare_scratch) in the staging's marker: the re-run that removes
# a killed run's staging removes them too. Only these kinds of names, directly inside a temporary
# folder, owned by us and not symlinks, are ever removed (the marker lies where others may write).
SCRATCH_PATTERNS = ("dask-scratch-*", "pymp-*")
_OPEN: list["OutputFolder"] = []  # the output folders open in this process, innermost last
_CHUNK = 1 << 20
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
OVERWRITE_HELP = ("replace a file at one of this command's output names that its folder's record does not list "
                  "as ours and unchanged (a user's file, or one of ours edited since); without it such a file is "
                  "refused. Files at other names, symlinks and folders are never touched")
"""The one meaning of ``--overwrite``, in every command's help."""


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
    """One file we wrote (``group``: the export's configuration, or None).

    No time stamp: the same run gives the same record."""

    path: str
    size: int
    sha256: str
    command: str
    group: str | None = None


def sha256_of(path: str | os.PathLike, *, dir_fd: int | None = None) -> str:
    """The hex sha256 of a file, read in 1 MiB chunks (``dir_fd``: ``path`` relative to it, no link followed).

    Example:
        >>> with tempfile.NamedTemporaryFile() as fh:
        ...     _ = fh.write(b"abc"); fh.flush()
        ...     sha256_of(fh.name)[:12]
        'ba7816bf8f01'
    """
    import hashlib  # here: hashlib loads OpenSSL (~3 ms), which a command that hashes nothing spares

    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), dir_fd=dir_fd)
    with open(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _shown(path: object) -> str:
    # newlines in a name would break the one-line error
    return os.fspath(path).replace("\n", "\\n").replace("\r", "\\r") if isinstance(path, (str, os.PathLike)) else repr(path)


def _check_relative(path: object, where: str) -> str:
    """``path`` if it is a legal recorded path (relative POSIX, no ``..``/``.``/empty part, no NUL or newline)."""
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


def _inside(root: str | os.PathLike, path: str) -> Path:
    """``root/path`` after the path rules, refusing any part (below ``root``) that is a symlink."""
    _check_relative(path, os.fspath(root))
    current = Path(root)
    for part in path.split("/"):
        current = current / part
        if current.is_symlink():
            raise PathRuleError(f"{_shown(current)}: a symlink; nothing is written or removed through it")
    return current


def _check_output(path: str | os.PathLike, flag: str) -> Path:
    """An output's path, checked: no NUL or newline, not empty, not a symlink, not a reserved name."""
    text = os.fspath(path)
    if any(c in text for c in "\0\n\r"):
        raise PathRuleError(f"{flag} {text!r}: holds a NUL or newline character")
    if not text:
        raise PathRuleError(f"{flag}: an empty path")
    path = Path(text)
    if path.name == RECORD or path.name.startswith(STAGING_PREFIX):
        raise PathRuleError(f"{_shown(path)}: {flag} takes a name reserved for our record or staging in every folder; "
                            "choose another name")
    if path.is_symlink():
        raise PathRuleError(f"{_shown(path)}: {flag} is a symlink; give the real path (nothing is written through a symlink)")
    return path


def _identities(path: str | os.PathLike) -> tuple[tuple[int, int] | None, list[tuple[int, int]]]:
    """(device, inode) of ``path`` (None if absent) and of each existing folder above it, symlinks resolved."""
    current = os.path.realpath(path)
    own = None
    with contextlib.suppress(OSError):
        st = os.stat(current)
        own = (st.st_dev, st.st_ino)
    above = []
    while (parent := os.path.dirname(current)) != current:
        current = parent
        with contextlib.suppress(OSError):
            st = os.stat(current)
            above.append((st.st_dev, st.st_ino))
    return own, above


def _refuse_overlap(outputs: Mapping[str, object], inputs: Mapping[str, object], *, contains: bool = True) -> None:
    """Refuse an output that is, contains (unless ``contains`` is False) or lies inside an input, by device and inode."""
    for out_flag, out in outputs.items():
        if out is None:
            continue
        o_id, o_above = _identities(out)
        for in_flag, given in inputs.items():
            if given is None:
                continue
            i_id, i_above = _identities(given)
            if i_id is None:
                continue  # a missing input fails where it is read
            if o_id is not None and o_id == i_id:
                how = "is the same file as"
            elif contains and o_id is not None and o_id in i_above:
                how = "contains"
            elif i_id in o_above:
                how = "lies inside"
            else:
                continue
            raise OwnershipError(f"{_shown(out)}: {out_flag} {how} {in_flag} {_shown(given)}; "
                                 "choose an output outside every input")


# Every top-level package the distribution ships (setup.cfg, [options.packages.find]): their files
# (code, metadata, templates, cards, READMEs) are inputs of every command.
SHIPPED_PACKAGES = ("builder_utils", "clevr_math", "clotho_aqa", "dataset_cards")


def _package_files() -> dict[str, Path]:
    """The installed folder of each of :data:`SHIPPED_PACKAGES`: an input of every command.

    Found by the import system without importing (``find_spec`` of a top-level name runs no
    code): a package this command never imported is protected too."""
    import importlib.util

    found = {}
    for name in SHIPPED_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        for index, folder in enumerate(locations):  # a namespace package may have several
            found[f"the installed package {name}" + (f" ({folder})" if index else "")] = Path(folder)
    return found


def _write_error(exc: BaseException, path: str | os.PathLike, named: bool = False) -> OwnershipError | None:
    """One line for a failed write (full disk, read-only, no permission) naming ``path``; None if not one.

    Also recognises libsndfile's, and a library's error raised from one (``datasets``'
    DatasetGenerationError around a full disk under its cache)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text, where = str(exc), (getattr(exc, "filename", None) if named else None) or path
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES,
                                                      errno.EPERM, errno.EFBIG):
            return OwnershipError(f"{_shown(where)}: cannot write: {exc.strerror or os.strerror(exc.errno)}")
        if ("No space left" in text or "Read-only file system" in text
                or (type(exc).__name__ == "LibsndfileError" and "writ" in text.lower())):
            reason = "Read-only file system" if "Read-only" in text else "No space left on device"
            return OwnershipError(f"{_shown(where)}: cannot write: {reason}")
        exc = exc.__cause__ or exc.__context__
    return None


def _entry(data: object, where: str) -> Entry:
    if not isinstance(data, dict):
        raise RecordError(f"{where}: an entry that is not an object; this record is not ours: move it away")
    try:
        entry = Entry(**data)
    except TypeError as exc:
        raise RecordError(f"{where}: a malformed entry ({exc}); this record is not ours: move it away") from None
    _check_relative(entry.path, where)
    if (type(entry.size) is not int or not isinstance(entry.sha256, str) or not isinstance(entry.command, str)
            or not (entry.group is None or isinstance(entry.group, str))):
        raise RecordError(f"{where}: entry {entry.path!r} has a malformed size, sha256 or command; move the record away")
    return entry


def _remedy(folder: Path) -> str:
    return (f"move {_shown(folder)} away (or delete what is in it) and run the command again to re-create it, "
            "or give a new output folder")


def read_record(folder: str | os.PathLike) -> tuple[dict[str, Entry], dict | None]:
    """The record of ``folder``: (path -> :class:`Entry`, the pending commit or None); untrusted: :class:`RecordError`.

    Example:
        >>> read_record("/nonexistent")
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
            staging = _check_relative(pending["staging"], where)
            if "/" in staging or not staging.startswith(STAGING_PREFIX):
                raise PathRuleError(f"{where}: {staging!r}: not one of our staging folders")
            pending = {"staging": staging,
                       "files": [_entry(item, where) for item in pending.get("files", [])],
                       "remove": [_check_relative(p, where) for p in pending.get("remove", [])]}
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


def changed(root: str | os.PathLike, entry: Entry) -> str | None:
    """Why ``root/entry.path`` is no longer the file we wrote (type, size, then sha256), or None.

    Example:
        >>> changed("/nonexistent", Entry("a.txt", 1, "0" * 64, "x"))
        'missing'
    """
    root = Path(root)
    path = root / entry.path
    parent = PurePosixPath(entry.path).parent
    try:
        if parent != PurePosixPath("."):
            _inside(root, parent.as_posix())
    except PathRuleError:
        return f"inside {parent}/, a symlink"
    try:
        stat = path.lstat()
    except FileNotFoundError:
        return "missing"
    if path.is_symlink():
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(Path(os.path.realpath(root))):
            return f"a symlink leaving the folder (to {_shown(real)})"
        return "a symlink, not the file we wrote"
    if not path.is_file():
        return "not a regular file"
    if stat.st_size != entry.size:
        return f"size changed since {entry.command} wrote it ({stat.st_size:,} bytes, it wrote {entry.size:,})"
    if sha256_of(path) != entry.sha256:
        return f"content changed since {entry.command} wrote it"
    return None


def open_recorded(root: str | os.PathLike, entry: Entry) -> BinaryIO:
    """``root/entry.path`` open for reading if it is still the file we wrote, checked on the open file.

    No symlink is followed (each folder is opened with ``O_NOFOLLOW`` through the one above), and
    the type, size and sha256 are those of the open file: whoever reads the handle (push hands it
    to the Hub) reads exactly the bytes checked, whatever is put at the name afterwards.

    Example:
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "a.txt").write_text("abc")
        >>> with open_recorded(root, Entry("a.txt", 3, sha256_of(root / "a.txt"), "x")) as handle:
        ...     handle.read()
        b'abc'
    """
    where = _shown(Path(root) / entry.path)
    parts = _check_relative(entry.path, _shown(root)).split("/")
    folders: list[int] = []
    try:
        folders.append(os.open(root, _DIR_FLAGS))
        for part in parts[:-1]:
            folders.append(os.open(part, _DIR_FLAGS, dir_fd=folders[-1]))
        # O_NONBLOCK: a FIFO put at the name must not block the open (it is then refused as not a file)
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0),
                     dir_fd=folders[-1])
    except OSError as exc:
        why = "a symlink" if exc.errno in (errno.ELOOP, errno.ENOTDIR) else exc.strerror or str(exc)
        raise OwnershipError(f"{where}: cannot be read as the file we wrote ({why}); nothing is read through "
                             "a symlink") from None
    finally:
        for folder in folders:
            os.close(folder)
    handle = open(fd, "rb")
    try:
        kind = os.fstat(fd)
        if not stat_kind.S_ISREG(kind.st_mode):
            raise OwnershipError(f"{where}: not a regular file")
        if kind.st_size != entry.size:
            raise OwnershipError(f"{where}: size changed since {entry.command} wrote it")
        import hashlib

        digest = hashlib.sha256()
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
        if digest.hexdigest() != entry.sha256:
            raise OwnershipError(f"{where}: content changed since {entry.command} wrote it")
        handle.seek(0)
        return handle
    except BaseException:
        handle.close()
        raise


def _reserved(path: str) -> bool:
    return any(part in _HIDDEN or part.startswith(STAGING_PREFIX) for part in path.split("/"))


class _Folders:
    """The folders below a root, held open without following links; a folder swapped mid-run is refused."""

    def __init__(self, root: Path, root_fd: int):
        self.root, self.fds, self._opened = root, {"": root_fd}, []

    def fd(self, rel: str, create: bool = True) -> int:
        if rel in self.fds:
            self._check(rel)
            return self.fds[rel]
        parent, _, name = rel.rpartition("/")
        parent_fd = self.fd(parent, create)
        if create:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, dir_fd=parent_fd)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            raise PathRuleError(f"{_shown(self.root / rel)}: a symlink or a file where a folder goes; nothing is "
                                "written through it: move it away") from None
        self.fds[rel] = fd
        self._opened.append(fd)
        return fd

    def _check(self, rel: str) -> None:
        while True:
            parent, _, name = rel.rpartition("/")
            try:
                seen = os.stat(name, dir_fd=self.fds[parent], follow_symlinks=False) if rel else os.lstat(self.root)
            except OSError:
                seen = None
            held = os.fstat(self.fds[rel])
            if seen is None or (seen.st_dev, seen.st_ino) != (held.st_dev, held.st_ino):
                raise PathRuleError(f"{_shown(self.root / rel)}: replaced (by a symlink or another folder) while "
                                    "this command was writing into it; nothing is written through it")
            if not rel:
                return
            rel = parent

    def close(self) -> None:
        for fd in self._opened:
            os.close(fd)
        self._opened.clear()


class OutputFolder:
    """One output folder of ``command`` (e.g. ``"clevr-math synth"``), open through :meth:`open`.

    Example:
        >>> root = Path(tempfile.mkdtemp()) / "out"
        >>> with OutputFolder.open(root, command="x") as out:
        ...     _ = (out.stage / "a.txt").write_text("a")
        ...     out.add(["a.txt"])
        >>> with OutputFolder.open(root, command="x") as out:
        ...     out.add([], remove=["a.txt"])
        >>> list(root.iterdir())     # an empty record is removed too
        []
    """

    def __init__(self, root: Path, command: str, overwrite: bool, create: bool, resume: str | None = None):
        self.root, self.command, self.overwrite, self.create = root, command, overwrite, create
        self.resume = resume
        self._committed = False
        self.record: dict[str, Entry] = {}
        self.stage: Path | None = None
        self._fd: int | None = None
        self._created: list[tuple[str, tuple[int, int]]] = []  # folders we made: real path, identity
        self._files: dict[str, tuple[str | None, str | None]] = {}
        self._remove: set[str] = set()
        self._trusted: set[str] = set()
        self._signals = contextlib.ExitStack()
        self._scratch: list[str] = []  # scratch folders made outside the staging (declare_scratch)

    @classmethod
    @contextlib.contextmanager
    def open(cls, path: str | os.PathLike, *, command: str, flag: str = "--out",
             inputs: Mapping[str, object] | None = None, caches: Mapping[str, object] | None = None,
             declared: Mapping[str, Mapping[str, object]] | None = None, overwrite: bool = False,
             file: bool = False, create: bool = True, resume: str | None = None) -> Iterator["OutputFolder"]:
        """Open the output ``path`` (with ``file``: one file, whose folder is opened): every command's write protocol.

        1. ``path`` is checked (path rules, not a symlink or reserved name); it and each of ``caches``
           must not be, hold or lie inside any of ``inputs`` (by device and inode), nor a cache overlap it;
           the temporary folder must not be or lie inside an input. The inputs always include every
           shipped package's files;
        2. the lock is taken (:class:`BusyError`), a killed run's pending commit rolled forward (its
           staged files that still match), dead staging folders removed, the record read;
        3. the block writes into ``out.stage`` and names its files with :meth:`add` (a full or
           read-only disk is one :class:`OwnershipError` line);
        4. on success the files are checked (:meth:`check`), journaled, moved into place and
           recorded; on failure nothing is left.

        ``declared`` (role -> flag -> path, :func:`builder_utils.options.path_values`) joins ``inputs``
        and ``caches``; every declared output is checked against the inputs. ``resume`` (letters,
        digits, ``-``) names the staging folder: a failed or killed run leaves it, and the next run
        with the same key takes it up with its finished files (long renders).
        """
        if resume is not None and (not resume or not all(c.isalnum() or c == "-" for c in resume)):
            raise ValueError(f"resume must be letters, digits and '-', got {resume!r}")
        path = _check_output(path, flag)
        declared = declared or {}
        inputs = {**_package_files(), **declared.get("input", {}), **declared.get("input_dir", {}), **(inputs or {})}
        caches = {name: cache for name, cache in {**declared.get("cache", {}), **(caches or {})}.items()
                  if cache is not None}
        others = {name: _check_output(given, name) for name, given in {**declared.get("output", {}),
                  **declared.get("output_dir", {})}.items() if given is not None and name != flag}
        _refuse_overlap({flag: path, **others, **caches}, inputs)
        # the scratch space every command falls back on (its temporary files, a Dask cluster's
        # folders): never inside an input; an input inside it (a test's data under /tmp) is fine
        _refuse_overlap({"the temporary folder (TMPDIR)": tempfile.gettempdir()}, inputs, contains=False)
        folder = cls(path.parent if file else path, command, overwrite, create, resume)
        folder._open()
        try:
            _refuse_overlap(caches, {flag: path})  # now that the output folder exists
            _refuse_overlap({flag: path}, caches)
            if file:
                folder.check(path.name)
            with folder._writing():
                yield folder
                folder._commit()
                folder._committed = True
        finally:
            folder._close()

    # -- opening and closing ---------------------------------------------------------------

    def _open(self) -> None:
        if self.root.is_symlink():
            raise PathRuleError(f"{_shown(self.root)}: the output folder is a symlink; give the real folder "
                                "(nothing is written through a symlink)")
        if self.root.exists() and not self.root.is_dir():
            raise OwnershipError(f"{_shown(self.root)}: exists and is not a folder; give a folder to write into")
        if not self.root.exists():
            if not self.create:
                raise OwnershipError(f"{_shown(self.root)}: no such folder")
            try:
                _make_folders(self.root, self._created)
            except OSError as exc:
                self._close()  # what it made before the failure goes again
                raise _write_error(exc, self.root) or OwnershipError(
                    f"{_shown(self.root)}: cannot create the output folder ({exc.strerror or exc})") from None
        from builder_utils.interrupt import signals_remembered

        self._signals.enter_context(signals_remembered())  # for the commit's raise_missed_signal
        try:
            self._lock()
            self.record, pending = read_record(self.root)
            if pending is not None:
                self._move(pending, check_staged=True)
            kept = None if self.resume is None else self.root / f"{STAGING_PREFIX}resume-{self.resume}"
            for child in sorted(self.root.glob(STAGING_PREFIX + "*")):
                # we hold the lock: a staging folder with our marker is a dead run's
                ours = child.is_dir() and not child.is_symlink() and (child / MARKER).is_file() \
                    and not (child / MARKER).is_symlink()
                if child == kept and not ours:
                    raise OwnershipError(f"{_shown(child)}: not a staging folder of ours; move it away")
                if ours and child != kept:
                    _remove_tree(child)
            if kept is not None:
                kept.mkdir(exist_ok=True)  # the same key's finished files are taken up
                _remove_scratch(kept / MARKER)  # its dead run's scratch, before the marker is ours
                self.stage = kept
            else:
                self.stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=self.root))
            self._write_marker()
            _OPEN.append(self)
            wait_point("staging")
        except OSError as exc:
            self._close()
            raise _write_error(exc, self.root) or OwnershipError(
                f"{_shown(self.root)}: cannot write into the output folder ({exc.strerror or exc})") from None
        except BaseException:
            self._close()
            raise

    def _write_marker(self) -> None:
        write_atomic(self.stage / MARKER, json.dumps({"pid": os.getpid(), "command": self.command,
                                                      "scratch": self._scratch}) + "\n")

    def _lock(self) -> None:
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise BusyError(f"{_shown(self.root)}: another command is writing into this folder; "
                            "wait until it is done, then run again") from None
        except OSError:
            pass  # a file system without flock: the staging and record rules still hold
        self._fd = fd

    def _close(self) -> None:
        if self in _OPEN:
            _OPEN.remove(self)
        if self.stage is not None:
            if self.resume is None or self._committed:
                _remove_tree(self.stage, dead=False)  # a resumable run's staging outlives its failure
            self.stage = None
        # the folders this command created and left empty (a failed or empty run) go again, the
        # deepest first; each only while it is still the folder mkdir made
        for real, identity in reversed(self._created):
            with contextlib.suppress(OSError):
                st = os.lstat(real)
                if stat_kind.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) == identity:
                    os.rmdir(real)
        self._created = []
        if self._fd is not None:
            os.close(self._fd)  # releases the lock
            self._fd = None
        self._signals.close()

    # -- what the block calls --------------------------------------------------------------

    def check(self, path: str, _checked: set | None = None) -> Path:
        """``root/path`` if this command may write it (absent, ours, or with ``overwrite`` someone's file).

        The commit checks every file again; call it before the work to refuse early."""
        _check_relative(path, _shown(self.root))
        if _reserved(path):
            raise PathRuleError(f"{_shown(self.root / path)}: a name reserved for our record or staging; "
                                "choose another name")
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
        if not os.path.lexists(target):
            return target
        if target.is_symlink() or not target.is_file():
            raise OwnershipError(f"{_shown(target)}: not a regular file (a symlink or a folder); it is left alone: "
                                 "move it away")
        entry = self.record.get(path)
        why = changed(self.root, entry) if entry is not None else f"was not written by {self.command}"
        if why is None or self.overwrite:
            return target
        raise OwnershipError(f"{_shown(target)}: exists and {why}; it is never replaced without --overwrite: "
                             "move it away, or give another output")

    def add(self, files: Mapping[str, str | None] | Iterable[str], *, hashes: Mapping[str, str] | None = None,
            remove: Iterable[str] = (), checked: bool = False) -> None:
        """Name staged files to move into place on success (a mapping gives each its group).

        ``remove``: a previous run's stale files, removed if still ours; ``checked``: the caller
        checked these targets itself (a card it merged)."""
        pairs = files.items() if isinstance(files, Mapping) else ((path, None) for path in files)
        for path, group in pairs:
            self._files[path] = (group, (hashes or {}).get(path))
            if checked:
                self._trusted.add(path)
        self._remove.update(remove)

    def claim(self, name: str) -> Path:
        """``root/name`` for a sub-folder another writer fills (a demo's world, its export).

        Refused when a symlink or a file, or when it holds files without a record of ours."""
        path = _inside(self.root, name)
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise OwnershipError(f"{_shown(path)} already exists and was not created by {self.command}; it is never "
                                 "replaced: move it away, or choose another --out folder")
        if path.is_dir() and any(not _reserved(p.name) for p in path.iterdir()):
            recorded = any(p.startswith(name + "/") for p in self.record)
            for folder in [path, *(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())]:
                with contextlib.suppress(RecordError):
                    entries, pending = read_record(folder)
                    # a writer killed inside its first commit left only its pending record: ours too
                    recorded = recorded or bool(entries) or pending is not None
            if not recorded:
                raise OwnershipError(
                    f"{_shown(path)} already exists and was not created by {self.command}; it is never replaced. "
                    "Choose another --out folder (a new or empty one), or move it away")
        return path

    def scratch(self, name: str) -> Path:
        """A folder inside the staging that is never moved into place (a build cache): removed
        with the staging, whatever the end of the block."""
        path = self.stage / ".scratch" / _check_relative(name, "scratch")
        path.mkdir(parents=True, exist_ok=True)
        return path

    # -- the commit ------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self) -> Iterator[None]:
        """A failed write becomes one line naming the output's final path (never the staging name)."""
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - only a write failure is turned into one line
            if isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM) and exc.filename and not (
                    Path(os.path.abspath(exc.filename)).is_relative_to(self.root.absolute())):
                raise  # an input we may not read: its own error, not a write failure
            error = _write_error(exc, self.root, named=True)
            if error is None:
                raise
            text = str(error)
            if self.stage is not None:  # the final name, never the hidden staging one
                for stage, root in ((self.stage.absolute(), self.root.absolute()), (self.stage, self.root)):
                    text = text.replace(os.fspath(stage) + os.sep, os.fspath(root) + os.sep)
            raise OwnershipError(text) from None

    def _write_record(self, entries: Iterable[Entry], pending: dict | None = None) -> None:
        entries = list(entries)
        if not entries and pending is None:
            (self.root / RECORD).unlink(missing_ok=True)  # nothing of ours left: no record either
            return
        write_atomic(self.root / RECORD, _record_text(entries, pending))

    def _commit(self) -> None:
        from builder_utils.interrupt import raise_missed_signal, signals_deferred

        if not self._files and not self._remove:
            return
        checked: set[str] = set()  # parent folders already checked (70,000 images share two)
        for path in self._files:
            if path in self._trusted:
                _inside(self.root, path)
            else:
                self.check(path, _checked=checked)
        entries = []
        for path, (group, sha) in sorted(self._files.items()):
            source = self.stage / path
            if not source.is_file() or source.is_symlink():
                raise OwnershipError(f"{_shown(self.root / path)}: named as an output but never written")
            entries.append(Entry(path, source.stat().st_size, sha or sha256_of(source), self.command, group))
        removable = sorted(p for p in self._remove - set(self._files) if p in self.record)
        pending = {"staging": self.stage.name, "files": entries, "remove": removable}
        wait_point("commit")
        raise_missed_signal()  # the point of no return: a run whose interruption was lost must not commit
        self._write_record(self.record.values(), pending)
        with signals_deferred():
            self._move(pending, check_staged=False)
        wait_point("committed")

    def _move(self, pending: dict, check_staged: bool) -> None:
        """Carry out a pending commit (after a cut: the staged files that still match it).

        A replaced file stays in the staging until the end, so a failed move puts back every file."""
        folders = _Folders(self.root, self._fd)
        staging = pending["staging"]
        done: dict[str, Entry] = dict(self.record)
        moved: list[tuple[int, int, str, int | None]] = []  # target folder, staged folder, name, folder of the old file
        try:
            try:
                staged_root = folders.fd(staging, create=False)
            except (OSError, PathRuleError):
                staged_root = None  # gone, or not a folder of ours: nothing is moved from it
            for entry in pending["files"]:
                parent, _, name = entry.path.rpartition("/")
                source = None
                if staged_root is not None:
                    with contextlib.suppress(OSError, PathRuleError):
                        held = folders.fd(f"{staging}/{parent}".rstrip("/"), create=False)
                        kind = os.stat(name, dir_fd=held, follow_symlinks=False)
                        if stat_kind.S_ISREG(kind.st_mode) and (not check_staged or (
                                kind.st_size == entry.size and sha256_of(name, dir_fd=held) == entry.sha256)):
                            source = held
                if source is None:
                    if check_staged and changed(self.root, entry) is None:
                        done[entry.path] = entry  # moved before the cut
                    elif entry.path in done and changed(self.root, done[entry.path]) is not None:
                        del done[entry.path]  # neither the old nor the new file: not ours any more
                    continue
                target = folders.fd(parent)
                try:
                    old = os.stat(name, dir_fd=target, follow_symlinks=False)
                except FileNotFoundError:
                    old = None
                if old is not None and not stat_kind.S_ISREG(old.st_mode):
                    raise OwnershipError(f"{_shown(self.root / entry.path)}: not a regular file; it is left alone")
                kept = None
                if old is not None:
                    kept = folders.fd(f"{staging}/{_REPLACED}/{parent}".rstrip("/"))
                    os.rename(name, name, src_dir_fd=target, dst_dir_fd=kept)
                moved.append((target, source, name, kept))
                folders.fd(parent)  # still the folder opened: checked again right before the move
                os.rename(name, name, src_dir_fd=source, dst_dir_fd=target)
                done[entry.path] = entry
                wait_point("commit-move")  # the test suite's kill -9 inside the commit
        except BaseException as exc:
            for target, source, name, kept in reversed(moved):
                with contextlib.suppress(OSError):
                    os.rename(name, name, src_dir_fd=target, dst_dir_fd=source)
                if kept is not None:
                    with contextlib.suppress(OSError):
                        os.rename(name, name, src_dir_fd=kept, dst_dir_fd=target)
            if not check_staged:
                self._write_record(self.record.values())  # the commit did not happen
            if isinstance(exc, OSError):
                raise _write_error(exc, self.root) or OwnershipError(
                    f"{_shown(self.root)}: cannot move the new files into place ({exc.strerror or exc}); "
                    "nothing was changed") from None
            raise
        finally:
            folders.close()
        for path in pending["remove"]:
            entry = done.get(path)
            if entry is not None and changed(self.root, entry) in (None, "missing"):
                self._unlink(path)
                del done[path]
        self.record = done
        self._write_record(done.values())

    def _unlink(self, path: str) -> None:
        target = _inside(self.root, path)
        target.unlink(missing_ok=True)
        folder = target.parent
        while folder != self.root and folder.is_dir() and not folder.is_symlink():
            try:
                folder.rmdir()  # only when empty
            except OSError:
                break
            folder = folder.parent


def _make_folders(path: Path, made: list[tuple[str, tuple[int, int]]]) -> list[tuple[str, tuple[int, int]]]:
    """Create ``path`` and its missing parents one at a time; appends to ``made`` (and returns it) those
    this call made, as the kernel resolved them: (real path, (device, inode)), outermost first (also
    those made before a failure).

    Decided on the kernel's paths, never on the text: in ``new/../u/x`` the made folders are
    ``new`` and ``u/x``, never the user's ``u`` (``new/..`` and ``new/../u`` already existed
    once ``new`` did).

    Example:
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "u").mkdir()
        >>> [Path(real).relative_to(root.resolve()).as_posix() for real, _ in _make_folders(root / "new/../u/x", [])]
        ['new', 'u/x']
    """
    missing = []
    current = path.absolute()
    while not os.path.exists(current) and current != current.parent:  # exists: the kernel's resolution
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue  # existed once its parent did (a '..' through a folder made here), or made meanwhile
        st = os.lstat(folder)
        made.append((os.path.realpath(folder), (st.st_dev, st.st_ino)))
    return made


def declare_scratch(path: str | os.PathLike) -> None:
    """Name a scratch folder the command made outside its output folder (see :data:`SCRATCH_PATTERNS`):
    listed in the innermost open output folder's staging marker, so that after a kill -9 the re-run
    removes it with the dead staging. Its maker still removes it on a normal end; without an open
    output folder (a library call) nothing is recorded.

    Example:
        >>> root = Path(tempfile.mkdtemp())
        >>> with OutputFolder.open(root / "out", command="x") as out:
        ...     declare_scratch(tempfile.mkdtemp(prefix="dask-scratch-"))
        ...     len(json.loads((out.stage / MARKER).read_text())["scratch"])
        1
    """
    if _OPEN and _OPEN[-1].stage is not None:
        _OPEN[-1]._scratch.append(os.path.abspath(path))
        _OPEN[-1]._write_marker()


def _remove_scratch(marker: Path) -> None:
    """Remove the scratch folders a dead run's marker lists (only those :data:`SCRATCH_PATTERNS` allows)."""
    import fnmatch

    try:
        data = load_json(marker, what="staging marker")
    except (JSONInputError, OSError):
        return  # an old marker (no list) or none: nothing declared
    listed = data.get("scratch") if isinstance(data, dict) else None
    temporary = {os.path.realpath(tempfile.gettempdir()), os.path.realpath("/tmp")}
    for path in listed if isinstance(listed, list) else []:
        if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
            continue
        name = os.path.basename(path)
        if not any(fnmatch.fnmatchcase(name, pattern) for pattern in SCRATCH_PATTERNS) or \
                os.path.realpath(os.path.dirname(path)) not in temporary:
            continue
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if stat_kind.S_ISDIR(st.st_mode) and st.st_uid == os.getuid():
                shutil.rmtree(path, ignore_errors=True)


def _remove_tree(folder: Path, dead: bool = True) -> None:
    """Remove a staging folder, its marker last (a removal cut short still leaves it ours); a ``dead``
    run's also the scratch folders its marker lists (a live process may still use its own, e.g.
    multiprocessing's socket folder, which multiprocessing removes at exit)."""
    if not folder.is_dir() or folder.is_symlink():
        return
    if dead and (folder / MARKER).is_file() and not (folder / MARKER).is_symlink():
        _remove_scratch(folder / MARKER)
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
