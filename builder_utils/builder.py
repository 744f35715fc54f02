"""Plumbing every dataset builder of the package shares: the cache key, config checks, a 3.x shim.

``datasets`` keys a builder's cache on the module name, config id and version only, so an edited
builder, template, config or input file would silently serve old rows: :func:`cache_key` covers
everything that decides them. The config is validated after ``datasets`` applied the keyword
overrides (with ``setattr``, which skips ``__post_init__``).

Example:
    >>> a = cache_key({"seed": 0}, packages=["builder_utils.splits"])
    >>> a == cache_key({"seed": 0}, packages=["builder_utils.splits"]) != cache_key({"seed": 1})
    True
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import hashlib
import importlib
import json
import os
import time
from collections.abc import Iterable
from importlib import metadata as importlib_metadata

import datasets

import builder_utils
from builder_utils import media_check

__all__ = ["CheckedConfigBuilder", "ConfigError", "cache_key", "content_digest", "distribution_version",
           "list_of"]


class ConfigError(ValueError):
    """A configuration name, option or value is invalid; the message names it and the valid values."""


def list_of(feature) -> object:
    """A list-of-``feature`` feature under any supported ``datasets`` version.

    Under 3.x a Python list: ``Sequence`` of a dict would turn a list of records into a record of lists.

    Example:
        >>> list_of(datasets.Value("string")).feature
        Value('string')
    """
    return datasets.List(feature) if hasattr(datasets, "List") else [feature]


@functools.lru_cache(maxsize=1)
def distribution_version() -> str:
    """The version of the installed distribution that ships ``builder_utils`` (its name only in setup.cfg).

    Example:
        >>> distribution_version().count(".") >= 1
        True
    """
    for name in importlib_metadata.packages_distributions().get("builder_utils", []):
        try:
            return importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            continue
    return builder_utils.__version__


def _package_files(package: str) -> list[tuple[str, str]]:
    """(label, path) of the code and data files of an installed package, labels relative to it."""
    module = importlib.import_module(package)
    root = os.path.dirname(os.path.abspath(module.__file__))
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".tsv")):
                path = os.path.join(folder, name)
                found.append((f"{package}/{os.path.relpath(path, root)}", path))
    return found


def _stamp(path: str) -> list:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return [os.path.basename(path), None]
    # a folder's mtime changes when an entry is added, removed or renamed
    return [os.path.basename(path), "dir" if os.path.isdir(path) else st.st_size, st.st_mtime_ns]


_DIGESTS: dict[tuple, str] = {}
_SETTLED_NS = 2_000_000_000


def content_digest(path: str) -> str | None:
    """The sha256 of a file's content (None if missing), remembered while size, mtime, *ctime* and inode hold.

    ctime, because a rewrite updates it even when mtime is set back; as git's index does, a file
    changed in the last seconds is not remembered (file times are coarser than successive writes).

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "a.csv"
        >>> _ = path.write_text("a,b\\n")
        >>> content_digest(str(path)) == content_digest(str(path)) != content_digest(str(path) + ".gone")
        True
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    stamp = (os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    known = _DIGESTS.get(stamp)
    if known is None:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        known = digest.hexdigest()
        if time.time_ns() - st.st_ctime_ns > _SETTLED_NS:
            _DIGESTS[stamp] = known
    return known


def cache_key(
    content: dict,
    *,
    packages: Iterable[str] = (),
    code_files: Iterable[str] = (),
    content_files: Iterable[str] = (),
    input_files: Iterable[str] = (),
    inherited: str | None = None,
) -> str:
    """A 16-hex-digit key: version, ``packages``, ``code_files``, ``content_files`` (small inputs) by
    content, ``content``, and ``input_files`` (archives, media folders) by size and mtime, as
    ``datasets`` does; a changed media file is caught when the export embeds it.

    Example:
        >>> import os, tempfile, pathlib
        >>> csv = pathlib.Path(tempfile.mkdtemp()) / "train.csv"
        >>> _ = csv.write_text("a,b\\n1,2\\n")
        >>> before = cache_key({}, content_files=[str(csv)])
        >>> stat = csv.stat()
        >>> _ = csv.write_text("a,b\\n3,4\\n")                       # same size
        >>> os.utime(csv, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same modification time
        >>> before != cache_key({}, content_files=[str(csv)])
        True
    """
    digest = hashlib.sha256()
    digest.update(f"version={distribution_version()}\n".encode())
    files = [entry for package in packages for entry in _package_files(package)]
    files += [(os.path.basename(path), os.path.abspath(path)) for path in code_files]
    for label, path in files:
        digest.update(label.encode() + b"\0")
        try:
            with open(path, "rb") as fh:
                digest.update(hashlib.sha256(fh.read()).digest())
        except FileNotFoundError:
            digest.update(b"missing")
    digest.update(json.dumps(content, sort_keys=True, default=str).encode())
    digest.update(json.dumps([[os.path.basename(os.fspath(p)), content_digest(os.fspath(p))]
                              for p in content_files]).encode())
    digest.update(json.dumps([_stamp(os.fspath(p)) for p in input_files]).encode())
    if inherited:
        digest.update(inherited.encode())
    return digest.hexdigest()[:16]


class CheckedConfigBuilder:
    """Mixin (before ``datasets.DatasetBuilder`` in the bases) for builders with checked configs.

    The config class has a ``validate()`` raising :class:`ConfigError`. A relative ``data_dir`` is
    made absolute, so two folders that share a relative name never share a cache.

    Example::

        class ClothoAQA(CheckedConfigBuilder, datasets.ArrowBasedBuilder):
            DATASET_NAME, BUILDER_CONFIG_CLASS = "Clotho-AQA", ClothoAQAConfig  # and cache_inputs(config)
    """

    DATASET_NAME = "dataset"

    @classmethod
    def config_options(cls) -> list[str]:
        """Every keyword a user may pass for a config (the config dataclass's fields)."""
        return [f.name for f in dataclasses.fields(cls.BUILDER_CONFIG_CLASS)]

    def _create_builder_config(self, config_name=None, custom_features=None, **config_kwargs):
        # `datasets` reports an unknown name or option without the valid ones; say them here.
        if isinstance(config_name, str) and config_name not in self.builder_configs:
            raise ConfigError(
                f"unknown {self.DATASET_NAME} config {config_name!r}; valid: {', '.join(self.builder_configs)}"
            )
        known = set(self.config_options())
        unknown = sorted(k for k in config_kwargs if k not in known and k != "config_id")
        if unknown:
            raise ConfigError(
                f"unknown {self.DATASET_NAME} config option(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}"
            )
        data_dir = config_kwargs.get("data_dir")
        if data_dir is not None and (isinstance(data_dir, bytes) or not isinstance(data_dir, (str, os.PathLike))):
            raise ConfigError(f"data_dir must be a folder path (str or os.PathLike), not {type(data_dir).__name__}")
        if data_dir:
            config_kwargs["data_dir"] = os.path.abspath(os.path.expanduser(os.fspath(data_dir)))
        builder_config, config_id = super()._create_builder_config(
            config_name=config_name, custom_features=custom_features, **config_kwargs
        )
        builder_config.validate()
        self.checked_config(builder_config)
        inputs = dict(self.cache_inputs(builder_config))
        content = {**builder_config.content(), **inputs.pop("content", {})}
        self.hash = cache_key(content, inherited=self.hash, **inputs)
        return builder_config, config_id

    def download_and_prepare(self, *args, **kwargs):
        """``datasets``' build, plus the record of the media files it checked (for the export's re-check)."""
        with media_check.recording() as checked:
            result = super().download_and_prepare(*args, **kwargs)
        if checked:
            media_check.save_checked(self.cache_dir, checked)
        else:
            media_check.load_checked(self.cache_dir)
        return result

    def _prepare_split(self, split_generator, **kwargs):
        if (kwargs.get("num_proc") or 1) > 1:
            # datasets forks its workers here: objects the parent holds are kept out of their
            # garbage collector, whose passes would otherwise write to (and so copy) every page of
            # the parent's heap in every worker.
            gc.freeze()
            try:
                return super()._prepare_split(split_generator, **kwargs)
            finally:
                gc.unfreeze()
        return super()._prepare_split(split_generator, **kwargs)

    def checked_config(self, config) -> None:
        """Further checks that need the builder (a hook; the default does nothing)."""

    def cache_inputs(self, config) -> dict:
        """Keyword arguments of :func:`cache_key`; ``content`` joins the config's own ``content()``."""
        raise NotImplementedError
