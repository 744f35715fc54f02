"""The cache hash of a CLEVR-Math build.

``datasets`` keys a builder's cache on the module name, the config id and the version only; when
builders are used directly, editing the code, a template file or a predefined configuration
would silently return the old rows. The hash computed here covers everything that decides the
rows: the package version, the generator's code and data files (templates, synonyms,
metadata), the builder package's own modules, the configuration's content fields and the size and
modification time of the input files (what ``datasets`` itself uses for local data files).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from importlib import metadata as importlib_metadata

import builder_utils
import builder_utils.clevr

# Distribution name in setup.cfg; an uninstalled checkout falls back to the package version.
_DISTRIBUTION = "clevr-clotho-qa"


def package_version() -> str:
    """The installed distribution's version (``builder_utils.__version__`` if not installed).

    Example:
        >>> package_version()  # doctest: +SKIP
        '0.1.0'
    """
    try:
        return importlib_metadata.version(_DISTRIBUTION)
    except importlib_metadata.PackageNotFoundError:
        return builder_utils.__version__


def hashed_source_files(extra: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(label, path) of every file whose content goes into the cache hash, then ``extra``;
    labels are stable across machines so equal trees hash equally.

    Example:
        >>> labels = [label for label, _ in hashed_source_files()]
        >>> "generate.py" in labels and "clevr_math/released.py" in labels
        True
    """
    # Everything under builder_utils/clevr can change generated rows (executor, generator,
    # templates, synonyms), and so can this package's own modules (category mapping of
    # released files, template selection, row layout) even when the version number stays
    # the same, as in an editable install; hashing them costs a few milliseconds.
    found = []
    roots = (
        (os.path.dirname(os.path.abspath(builder_utils.clevr.__file__)), ""),
        (os.path.dirname(os.path.abspath(__file__)), "clevr_math/"),
    )
    for root, prefix in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".json", ".tsv")):
                    path = os.path.join(folder, name)
                    found.append((prefix + os.path.relpath(path, root), path))
    return found + [(os.path.basename(p), os.path.abspath(p)) for p in extra]


def _file_stamp(path: str) -> list:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [os.path.basename(path), None]
    return [os.path.basename(path), st.st_size, st.st_mtime_ns]


def cache_hash(
    content: dict,
    *,
    code_files: Iterable[str] = (),
    input_files: Iterable[str] = (),
    inherited: str | None = None,
) -> str:
    """A short hex digest over the package version, the code and template files, the config
    content and the input files' size and mtime (``inherited`` is a hash ``datasets`` passed in,
    such as the loading script's own hash in legacy mode).

    Example:
        >>> a = cache_hash({"seed": 0})
        >>> a == cache_hash({"seed": 0}) != cache_hash({"seed": 1})
        True
    """
    digest = hashlib.sha256()
    digest.update(f"version={package_version()}\n".encode())
    for label, path in hashed_source_files(code_files):
        digest.update(label.encode() + b"\0")
        try:
            with open(path, "rb") as fh:
                digest.update(hashlib.sha256(fh.read()).digest())
        except FileNotFoundError:
            digest.update(b"missing")
    digest.update(json.dumps(content, sort_keys=True, default=str).encode())
    digest.update(json.dumps([_file_stamp(p) for p in input_files]).encode())
    if inherited:
        digest.update(inherited.encode())
    return digest.hexdigest()[:16]
