"""The export's manifest: every file an export wrote into its folder, with its size and sha256.

``OUT/.hub-export-manifest.json`` is what makes a file *ours*. Export replaces or removes only
files it lists (and only while their content is still what export wrote); push uploads only
files it lists, and only while they are unchanged. Everything else in the folder (notes, a
user's scripts, another tool's output) is never touched or uploaded.

The name is hidden, so ``load_dataset(OUT)`` and the card's ``data_files`` never see it, and it
is outside the ``.export-*`` prefix of the staging folders (which a later export may remove).
The JSON is sorted and carries no time stamp: the same export gives the same bytes. It is read
and written with :mod:`builder_utils.ownership`, like the demos' and the synthetic world's records.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "a").mkdir(); (folder / "a" / "train-00000-of-00001.parquet").write_bytes(b"rows")
    4
    >>> records = {r.path: r for r in [file_record(folder, "a/train-00000-of-00001.parquet", "a")]}
    >>> write_manifest(folder, records)
    >>> read_manifest(folder)["a/train-00000-of-00001.parquet"].size
    4
    >>> changed_files(folder, records)
    []
    >>> _ = (folder / "a" / "train-00000-of-00001.parquet").write_bytes(b"ROWS")
    >>> changed_files(folder, records)[0][1]
    'content changed since export'
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from builder_utils.ownership import RecordError, read_record, record_text, write_record

MANIFEST = ".hub-export-manifest.json"
FORMAT = 1
_CHUNK = 1 << 20
# The shard names push_to_hub (and export) write: <config dir>/<split>-NNNNN-of-MMMMM.parquet
SHARD = re.compile(r"^(?P<dir>[^/]+)/(?P<split>\w+(?:\.\w+)*)-(?P<index>\d{5})-of-(?P<count>\d{5})\.parquet$")


class ManifestError(RecordError):
    """A manifest that cannot be read, or a folder whose files no longer match it."""


@dataclass(frozen=True)
class FileRecord:
    """One file export wrote: path relative to the folder, size, sha256, configuration (or None)."""

    path: str
    size: int
    sha256: str
    config: str | None = None


def sha256_of(path: str | os.PathLike) -> str:
    """The hex sha256 of a file, read in 1 MiB chunks.

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile() as fh:
        ...     _ = fh.write(b"abc"); fh.flush()
        ...     sha256_of(fh.name)[:12]
        'ba7816bf8f01'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_record(root: str | os.PathLike, relative: str, config: str | None = None) -> FileRecord:
    """Measure ``root/relative`` as a :class:`FileRecord`.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()); _ = (root / "x.txt").write_text("hi")
        >>> file_record(root, "x.txt").size
        2
    """
    path = Path(root) / relative
    return FileRecord(path=relative, size=path.stat().st_size, sha256=sha256_of(path), config=config)


def read_manifest(folder: str | os.PathLike) -> dict[str, FileRecord]:
    """The records of ``folder``'s manifest by path; ``{}`` when there is none.

    Example:
        >>> read_manifest("/nonexistent")
        {}
    """
    records = read_record(Path(folder) / MANIFEST, _records, writer="export", remedy="re-export into a new folder",
                          error=ManifestError)
    return {} if records is None else records


def _records(data: dict) -> dict[str, FileRecord]:
    if data.get("format") != FORMAT:
        raise ValueError(f"unknown format {data.get('format')!r}")
    return {record.path: record for record in (FileRecord(**entry) for entry in data["files"])}


def manifest_text(records: Iterable[FileRecord]) -> str:
    """The manifest's JSON text: records sorted by path, no time stamps (reproducible bytes).

    Example:
        >>> import json
        >>> json.loads(manifest_text([FileRecord("README.md", 3, "ab")]))["files"]
        [{'path': 'README.md', 'size': 3, 'sha256': 'ab', 'config': None}]
    """
    return record_text(_data(records), indent=2)


def _data(records: Iterable[FileRecord]) -> dict:
    return {"format": FORMAT, "files": [asdict(record) for record in sorted(records, key=lambda r: r.path)]}


def write_manifest(folder: str | os.PathLike, records: Mapping[str, FileRecord]) -> None:
    """Write ``folder``'s manifest atomically (see :func:`manifest_text`).

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> write_manifest(folder, {})
        >>> read_manifest(folder)
        {}
    """
    write_record(Path(folder) / MANIFEST, _data(records.values()), indent=2)


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (symlinks resolved) lies inside ``root`` (resolved).

    Example:
        >>> inside(Path("/tmp"), Path("/tmp/a/b")), inside(Path("/tmp"), Path("/etc/passwd"))
        (True, False)
    """
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def difference(root: str | os.PathLike, record: FileRecord, hash_content: bool = True) -> str | None:
    """Why ``root/record.path`` is no longer the file export wrote, or None if it still is.

    A symlink is never ours (export writes regular files only); one that leaves the folder is
    named as such, since uploading it would send a file from elsewhere on the machine.

    Example:
        >>> difference("/nonexistent", FileRecord("a.parquet", 1, "00"))
        'missing'
    """
    root = Path(root)
    path = root / record.path
    if path.is_symlink():
        if not inside(root, path):
            return f"a symlink leaving the folder (to {os.path.realpath(path)})"
        return "a symlink, not the file export wrote"
    for parent in Path(record.path).parents:
        if parent != Path(".") and (root / parent).is_symlink():
            return f"inside {parent.as_posix()}/, a symlink" + ("" if inside(root, root / parent) else " leaving the folder")
    if not path.exists():
        return "missing"
    if not path.is_file():
        return "not a regular file"
    if path.stat().st_size != record.size:
        return f"size changed since export ({path.stat().st_size:,} bytes, export wrote {record.size:,})"
    if hash_content and sha256_of(path) != record.sha256:
        return "content changed since export"
    return None


def changed_files(root: str | os.PathLike, records: Mapping[str, FileRecord]) -> list[tuple[str, str]]:
    """``(path, reason)`` for every recorded file that is no longer what export wrote.

    Example:
        >>> changed_files("/nonexistent", {"a": FileRecord("a", 1, "00")})
        [('a', 'missing')]
    """
    found = []
    for path in sorted(records):
        reason = difference(root, records[path])
        if reason is not None:
            found.append((path, reason))
    return found
