"""Folders a command created itself, listed in a small manifest beside them.

A demo writes several folders into one output folder: a synthetic data set, a cache, an export.
A user may point it at a folder that already holds their own ``CLEVR_v1.0``, ``cache`` or
``hub`` (``CLEVR_v1.0`` is the very name the README gives real data). Such a folder must never be
replaced or emptied. The manifest ``OUT/.<owner>.json`` lists the folders the command created;
a folder that exists and is not listed (or is a symlink) is refused with a message naming it,
before anything is written. A folder is recorded *before* it is created, so a run interrupted
half-way still owns what it left behind and the next run may replace it. The record is read and
written with :mod:`builder_utils.ownership`, like the export's and the synthetic world's.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> folders = OwnedFolders(root, "clevr-math demo")
    >>> [p.name for p in folders.claim("data", "cache")]
    ['data', 'cache']
    >>> (root / "hub").mkdir()                        # the user's own folder
    >>> folders.claim("data", "hub")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    builder_utils.owned.NotOurFolderError: .../hub already exists and was not created by clevr-math demo...
    >>> sorted(OwnedFolders(root, "clevr-math demo").owned())
    ['cache', 'data']
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from builder_utils.ownership import RecordError, foreign, not_a_folder, read_record, write_record

__all__ = ["NotOurFolderError", "OwnedFolders", "mark_written_by", "written_by"]


class NotOurFolderError(FileExistsError):
    """A folder the command would write is someone else's; the message names it."""


def _slug(owner: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", owner.lower()).strip("-")


def mark_written_by(folder: str | os.PathLike, owner: str) -> Path:
    """Put ``owner``'s marker file in a folder it is writing (before the folder is moved into place).

    A command that replaces a whole folder on ``--overwrite`` checks the marker with
    :func:`written_by` first, so ``--overwrite`` only ever replaces a folder it wrote.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> written_by(folder, "clotho-aqa synth")
        False
        >>> mark_written_by(folder, "clotho-aqa synth").name
        '.clotho-aqa-synth.json'
        >>> written_by(folder, "clotho-aqa synth")
        True
    """
    return write_record(Path(folder) / f".{_slug(owner)}.json", {"written_by": owner})


def written_by(folder: str | os.PathLike, owner: str) -> bool:
    """Whether ``folder`` is a real folder (not a symlink) carrying ``owner``'s marker (a regular file)."""
    folder = Path(folder)
    if folder.is_symlink():
        return False
    try:
        marker = read_record(folder / f".{_slug(owner)}.json", writer=owner, noun="marker")
    except RecordError:
        return False  # an unreadable marker claims nothing
    return isinstance(marker, dict) and marker.get("written_by") == owner


class OwnedFolders:
    """The folders ``owner`` (a command's name, e.g. ``"clotho-aqa demo"``) created under ``root``."""

    def __init__(self, root: str | os.PathLike, owner: str):
        self.root = Path(root)
        self.owner = owner
        self.manifest = self.root / f".{_slug(owner)}.json"

    def owned(self) -> set[str]:
        """Names of the folders recorded as ours (none when the manifest is absent or unreadable)."""
        try:
            recorded = read_record(self.manifest, writer=self.owner)
        except RecordError:
            return set()  # claims nothing: every existing folder is then refused, the safe side
        folders = recorded.get("folders") if isinstance(recorded, dict) else None
        return {name for name in folders if isinstance(name, str)} if isinstance(folders, list) else set()

    def claim(self, *names: str) -> list[Path]:
        """Paths of ``names`` under ``root``, each new or already ours; else :class:`NotOurFolderError`.

        Every name is checked before anything is written, so a refusal changes nothing. New
        names are recorded in the manifest before the caller creates them.
        """
        owned = self.owned()
        for name in names:
            path = self.root / name
            if foreign(self.root, name, owned) or not_a_folder(path):
                raise NotOurFolderError(
                    f"{path} already exists and was not created by {self.owner}; it is never replaced. "
                    f"Choose another --out folder (a new or empty one), or move {path} away"
                )
        if self.root.exists() and not self.root.is_dir():
            raise NotOurFolderError(f"{self.root} is a file, not a folder; choose another --out folder")
        new = sorted(set(names) - owned)
        if new:
            write_record(self.manifest, {"written_by": self.owner, "folders": sorted(owned | set(names))}, indent=1)
        return [self.root / name for name in names]

    def fresh(self, name: str) -> Path:
        """Claim ``name`` and empty it (it is ours): the folder is absent afterwards.

        Example:
            >>> import tempfile, pathlib
            >>> root = pathlib.Path(tempfile.mkdtemp())
            >>> folders = OwnedFolders(root, "demo")
            >>> folders.fresh("cache").mkdir()
            >>> folders.fresh("cache").exists()
            False
        """
        (path,) = self.claim(name)
        if path.exists():
            shutil.rmtree(path)
        return path
