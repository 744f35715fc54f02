"""Downloads recorded in a ``checksums.tsv``, fetched and checked the same way by every builder.

TensorFlow Datasets' format, tab-separated: ``<url> <size> <sha256> <file name>``; an empty cell
is "not recorded", ``#`` starts a comment.

Example:
    >>> import tempfile, pathlib
    >>> table = pathlib.Path(tempfile.mkdtemp()) / "checksums.tsv"
    >>> _ = table.write_text("# comment\\nhttps://x.org/a.csv\\t3\\t\\ta.csv\\n")
    >>> read_checksums(table)["https://x.org/a.csv"]
    Download(url='https://x.org/a.csv', size=3, sha256=None, filename='a.csv')
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

__all__ = ["ChecksumError", "Download", "DownloadError", "download", "read_checksums", "verify_download"]


class ChecksumError(ValueError):
    """A downloaded file whose size or sha256 differs from the recorded one; names the file."""


class DownloadError(FileNotFoundError):
    """A download that could not be done; the message gives the URL, the reason and what else to do."""


@dataclass(frozen=True)
class Download:
    """One download as recorded in ``checksums.tsv``; ``size`` / ``sha256`` None when not recorded."""

    url: str
    size: int | None
    sha256: str | None
    filename: str


def read_checksums(path: str | os.PathLike) -> dict[str, Download]:
    """The downloads recorded in a ``checksums.tsv``, by URL; a malformed line names its number.

    Example:
        >>> sorted(read_checksums(os.path.join(os.path.dirname(__import__("clevr_math").__file__), "checksums.tsv")))
        ['https://dl.fbaipublicfiles.com/clevr/CLEVR_v1.0.zip']
    """
    downloads = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip() or line.startswith("#"):
                continue
            fields = line.rstrip("\n").split("\t")
            size, sha256 = (fields[1].strip(), fields[2].strip()) if len(fields) == 4 else ("?", "")
            if len(fields) != 4 or not (size.isdigit() or not size) or not (sha256 == "" or _is_sha256(sha256)):
                raise ValueError(
                    f"{path}: line {number}: expected url, size (digits or empty), sha256 (64 hex digits or "
                    "empty) and file name separated by tabs"
                )
            downloads[fields[0]] = Download(fields[0], int(size) if size else None, sha256 or None, fields[3])
    return downloads


def _is_sha256(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def file_sha256(path: str | os.PathLike) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks.

    Example:
        >>> import tempfile
        >>> path = tempfile.mktemp()
        >>> _ = open(path, "wb").write(b"abc")
        >>> file_sha256(path)[:16]
        'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_download(path: str | os.PathLike, recorded: Download | None) -> None:
    """Check a downloaded file against its record: the size first (instant), then sha256; None: nothing.

    Example:
        >>> import tempfile
        >>> path = tempfile.mktemp()
        >>> _ = open(path, "wb").write(b"abc")
        >>> verify_download(path, Download("https://x.org/a", 4, None, "a"))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        builder_utils.checksums.ChecksumError: ...: downloaded from https://x.org/a: 3 bytes, expected 4; delete it and download again
    """
    if recorded is None:
        return
    size = os.path.getsize(path)
    if recorded.size is not None and size != recorded.size:
        raise ChecksumError(
            f"{path}: downloaded from {recorded.url}: {size} bytes, expected {recorded.size}; delete it and download again"
        )
    if recorded.sha256 is not None:
        actual = file_sha256(path)
        if actual != recorded.sha256:
            raise ChecksumError(
                f"{path}: downloaded from {recorded.url}: sha256 {actual}, expected {recorded.sha256}; "
                "delete it and download again"
            )


def _reason(exc: BaseException) -> str:
    """The most specific message in an exception chain (fsspec's FileNotFoundError says only the URL)."""
    reasons = []
    while exc is not None and len(reasons) < 10:
        text = str(exc).strip()
        if text:
            reasons.append(f"{type(exc).__name__}: {text}")
        exc = exc.__cause__ or exc.__context__
    return reasons[1] if len(reasons) > 1 else (reasons[0] if reasons else "unknown error")


def download(dl_manager, url: str, recorded: Download | None, dataset: str, alternatives: str) -> str:
    """Fetch ``url`` with a ``datasets`` download manager and verify it; returns the local path.

    A failure raises :class:`DownloadError` giving the URL, the reason and ``alternatives`` (offline).

    Example::

        path = download(dl_manager, url, checksums.get(url), "Clotho-AQA", "Or pass data_dir=...")
    """
    try:
        path = dl_manager.download(url)
    except ImportError as exc:
        # datasets >= 4 fetches http(s) URLs through fsspec's HTTP filesystem but no longer
        # depends on its extra (aiohttp): without it the download cannot start.
        raise DownloadError(
            f"{dataset}: no data_dir was given, and downloading {url} needs HTTP support that is not installed "
            f"({exc}; install it with `pip install 'fsspec[http]'`). {alternatives}"
        ) from None
    except (ConnectionError, OSError) as exc:
        raise DownloadError(
            f"{dataset}: no data_dir was given and downloading {url} failed ({_reason(exc)}). {alternatives}"
        ) from None
    verify_download(path, recorded)
    return path
