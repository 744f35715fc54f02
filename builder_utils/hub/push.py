"""Upload an exported folder to a Hub dataset repository with ``huggingface_hub``, resumably.

What is uploaded and deleted: README.md (this package), "What export and push may touch".
Not ``HfApi.upload_folder`` (huggingface_hub 2.x, resumable too): it globs a walk of the whole
folder (following symlinks), uploads the card from disk and would delete in its first commit.
Here the files are exactly the record's, the card is built in memory, and the card and the
deletions come last, once every shard they describe is on the Hub. A rerun resumes: committed
files are found unchanged remotely, and Xet deduplicates a batch cut short.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import DatasetCard

from builder_utils.datasets_adapter import DatasetInfosDict, MetadataConfigs
from builder_utils.hub.card import merge_metadata, read_card
from builder_utils.hub.export import COMMAND, README, SHARD, config_dir, split_files
from builder_utils.ownership import RECORD, Entry, OwnershipError, changed, open_recorded, read_record

logger = logging.getLogger(__name__)

COMMIT_FILES = 100
COMMIT_BYTES = 4 * 2**30
# Files the Hub keeps in git rather than LFS/Xet are small; their blob id is cheap to compute.
GIT_BLOB_LIMIT = 10 * 2**20


class PushError(RuntimeError):
    """A push that cannot be done (bad folder, no token, no network, refused by the Hub)."""


@dataclass(frozen=True)
class LocalFile:
    """A file to push; ``git_oid`` (small files): what the Hub reports for a file it keeps in git."""

    path: str
    size: int
    sha256: str
    config: str | None = None
    git_oid: str | None = None


@dataclass(frozen=True)
class RemoteFile:
    """A file of the remote tree: size, LFS/Xet sha256 (None for a git file) and git blob id."""

    path: str
    size: int
    sha256: str | None = None
    git_oid: str | None = None


@dataclass
class PushPlan:
    """What a push does: files to upload, files already there, remote shards to delete."""

    upload: list[LocalFile] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)


@dataclass
class PushResult:
    """What a push did: the last commit's URL (the repository's if none), files sent and skipped."""

    url: str
    uploaded: int = 0
    unchanged: int = 0
    deleted: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the command line.

        Example:
            >>> PushResult("https://hub/x", 3, 1, ["a/train-00001-of-00002.parquet"]).summary()
            '3 file(s) uploaded, 1 already on the Hub, 1 stale shard(s) deleted: https://hub/x'
        """
        return (f"{self.uploaded} file(s) uploaded, {self.unchanged} already on the Hub, "
                f"{len(self.deleted)} stale shard(s) deleted: {self.url}")


def git_blob_id(data: bytes) -> str:
    """The git object id of a file's content (what the Hub reports for a non-LFS file).

    Example:
        >>> git_blob_id(b"")
        'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    """
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _same(local: LocalFile, remote: RemoteFile) -> bool:
    if local.size != remote.size:
        return False
    if remote.sha256 is not None:
        return remote.sha256 == local.sha256
    return remote.git_oid is not None and remote.git_oid == local.git_oid


def plan_push(local: Mapping[str, LocalFile], remote: Mapping[str, RemoteFile], config_dirs: Iterable[str]) -> PushPlan:
    """Compare the files to push with the remote tree: what to upload, what to delete.

    Uploaded unless the remote content is provably the same. Deleted: a remote shard of a
    ``config_dirs`` folder and of a split the push holds shards of there, not pushed itself.

    Example:
        >>> local = {"a/train-00000-of-00001.parquet": LocalFile("a/train-00000-of-00001.parquet", 3, "s1")}
        >>> remote = {"a/train-00000-of-00001.parquet": RemoteFile("a/train-00000-of-00001.parquet", 3, "s1"),
        ...           "a/train-00001-of-00002.parquet": RemoteFile("a/train-00001-of-00002.parquet", 9, "s9"),
        ...           "a/notes.md": RemoteFile("a/notes.md", 5, None, "g5"),
        ...           "a/predictions-00000-of-00001.parquet": RemoteFile("a/predictions-00000-of-00001.parquet", 5, "s5"),
        ...           "b/train-00000-of-00001.parquet": RemoteFile("b/train-00000-of-00001.parquet", 4, "s4")}
        >>> plan = plan_push(local, remote, ["a"])
        >>> plan.upload, plan.unchanged, plan.delete
        ([], ['a/train-00000-of-00001.parquet'], ['a/train-00001-of-00002.parquet'])
    """
    plan = PushPlan()
    for path in sorted(local):
        if path in remote and _same(local[path], remote[path]):
            plan.unchanged.append(path)
        else:
            plan.upload.append(local[path])
    dirs = set(config_dirs)
    replaced = {(m["dir"], m["split"]) for m in map(SHARD.match, local) if m}
    for path in sorted(remote):
        match = SHARD.match(path)
        if match and match["dir"] in dirs and (match["dir"], match["split"]) in replaced and path not in local:
            plan.delete.append(path)
    return plan


def commit_batches(files: Sequence[LocalFile], max_files: int = COMMIT_FILES, max_bytes: int = COMMIT_BYTES) -> list[list[LocalFile]]:
    """Cut the files into ordered commits of at most ``max_files`` / ``max_bytes`` (a larger file: alone).

    Example:
        >>> files = [LocalFile(str(i), size, "") for i, size in enumerate([4, 4, 9, 1])]
        >>> [[f.path for f in batch] for batch in commit_batches(files, max_files=3, max_bytes=8)]
        [['0', '1'], ['2'], ['3']]
    """
    batches: list[list[LocalFile]] = []
    current: list[LocalFile] = []
    size = 0
    for item in files:
        if current and (len(current) >= max_files or size + item.size > max_bytes):
            batches.append(current)
            current, size = [], 0
        current.append(item)
        size += item.size
    if current:
        batches.append(current)
    return batches


@dataclass
class UploadPlan:
    """What a push uploads: files relative to the folder with their sizes, and the configs."""

    folder: Path
    files: list[tuple[str, int]] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    config_dirs: list[str] = field(default_factory=list)
    records: dict[str, Entry] = field(default_factory=dict)

    @property
    def total_bytes(self) -> int:
        return sum(size for _, size in self.files)

    def describe(self, repo_id: str | None = None) -> str:
        """The dry-run listing: one line per file (size in bytes, path), then the total.

        Example:
            >>> print(UploadPlan(Path("out"), [("README.md", 10)], ["a"]).describe("me/x"))
                        10  README.md
            1 file(s), 10 bytes (0.0 MiB) to upload to datasets/me/x; configs: a
        """
        lines = [f"{size:>14,}  {path}" for path, size in self.files]
        target = f" to datasets/{repo_id}" if repo_id else ""
        lines.append(
            f"{len(self.files)} file(s), {self.total_bytes:,} bytes ({self.total_bytes / 2**20:,.1f} MiB) "
            f"to upload{target}; configs: {', '.join(self.configs) or '(none)'}"
        )
        return "\n".join(lines)


REPO_PLACEHOLDER = '"REPO_ID"'


def card_for_repo(text: str, repo_id: str | None) -> str:
    """The card text as uploaded: its usage examples name the repository (export cannot know it).

    Example:
        >>> card_for_repo('load_dataset("REPO_ID", "multihop")', "me/clevr-math")
        'load_dataset("me/clevr-math", "multihop")'
    """
    return text if not repo_id else text.replace(REPO_PLACEHOLDER, f'"{repo_id}"')


def check_repo_id(repo_id: str) -> None:
    """Refuse a repository id the Hub would refuse (huggingface_hub's own validator).

    Example:
        >>> check_repo_id("me/clevr-math")
        >>> check_repo_id("me/../x")
        Traceback (most recent call last):
        builder_utils.hub.push.PushError: invalid --repo_id 'me/../x': Repo id must be in the form 'repo_name' or 'namespace/repo_name': 'me/../x'. Use `repo_type` argument if needed.
    """
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as exc:
        raise PushError(f"invalid --repo_id {repo_id!r}: {exc}") from None
    if "/" not in repo_id:
        raise PushError(f"invalid --repo_id {repo_id!r}: give it as namespace/name, e.g. my-name/{repo_id}")


def plan_upload(folder: str | os.PathLike, repo_id: str | None = None) -> UploadPlan:
    """Check an exported folder and list what a push would upload, without any network.

    Every recorded file but the card must be what export wrote; with ``repo_id``, the README's
    size is the uploaded card's.

    Example:
        >>> plan_upload("/nonexistent")
        Traceback (most recent call last):
        builder_utils.hub.push.PushError: /nonexistent: no such folder; export first (`... export --out /nonexistent`)
    """
    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        raise PushError(f"{root}: no such folder; export first (`... export --out {folder}`)")
    readme = root / README
    if readme.is_symlink() or (readme.exists() and not readme.is_file()):
        raise PushError(f"{readme}: not a regular file; push uploads the card export wrote")
    card = read_card(readme)
    if card is None:
        raise PushError(f"{readme}: missing; push uploads a folder written by `export`")
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    if not configs:
        raise PushError(f"{readme}: the card has no `configs`; re-export the folder")
    data_files = {}
    for name, entry in configs.items():
        found = data_files[name] = split_files(root, entry)
        empty = [split for split, files in found.items() if not files]
        if not found or empty:
            raise PushError(
                f"{readme}: config {name!r} names data files that are not in the folder "
                f"(split(s) {', '.join(empty) or 'all'}); re-export it or remove it from the card"
            )
    try:
        records = {path: entry for path, entry in read_record(root)[0].items() if entry.command == COMMAND}
    except OwnershipError as exc:
        raise PushError(str(exc)) from None
    if not records:
        raise PushError(f"{root / RECORD}: lists no file written by export; push uploads only those: re-export the folder")
    for name, found in data_files.items():
        foreign = [f for files in found.values() for f in files if Path(f).relative_to(root).as_posix() not in records]
        if foreign:
            raise PushError(
                f"{foreign[0]}: named by config {name!r} of the card but not written by export, so push would "
                "not upload it; remove the config from the card, or re-export it"
            )
    edited = [(path, reason) for path in sorted(records) if path != README
               for reason in [changed(root, records[path])] if reason is not None]
    if edited:
        more = f" (and {len(edited) - 1} more)" if len(edited) > 1 else ""
        path, reason = edited[0]
        raise PushError(
            f"{root / path}: {reason}{more}; push uploads only the files export wrote, unchanged: re-export the folder"
        )
    pushed = sorted({record.group for record in records.values() if record.group})
    plan = UploadPlan(folder=root, configs=list(configs), config_dirs=sorted({config_dir(c) for c in pushed}))
    plan.records = {path: record for path, record in records.items() if path != README}
    size = len(card_for_repo(readme.read_text(encoding="utf-8"), repo_id).encode("utf-8"))
    plan.files = sorted([(README, size)] + [(path, record.size) for path, record in plan.records.items()])
    return plan


def _network_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [ConnectionError, TimeoutError]
    for module in ("httpx2", "httpx", "requests"):  # whichever HTTP client huggingface_hub uses
        try:
            imported = __import__(module)
        except ImportError:
            continue
        for name in ("TransportError", "ConnectionError", "Timeout", "TimeoutException"):
            kind = getattr(imported, name, None)
            if isinstance(kind, type) and issubclass(kind, BaseException):
                errors.append(kind)
    return tuple(errors)


def _merged_readme(local: Path, remote_text: str | None, repo_id: str | None = None) -> tuple[bytes, list[str]]:
    """The card to upload: the local one, plus remote-only configs. Returns (bytes, kept names)."""
    text = card_for_repo(local.read_text(encoding="utf-8"), repo_id)
    if remote_text is None:
        return text.encode("utf-8"), []
    try:
        remote = DatasetCard(remote_text)
        remote_configs = MetadataConfigs.from_dataset_card_data(remote.data)
    except Exception:  # an unparsable remote card is replaced, as push_to_hub would fail on it
        return text.encode("utf-8"), []
    card = DatasetCard(text)
    local_configs = MetadataConfigs.from_dataset_card_data(card.data)
    kept = [name for name in remote_configs if name not in local_configs]
    if not kept:
        return text.encode("utf-8"), []
    # Start from the remote card, overlay ours: merge_metadata keeps what we do not replace.
    infos = DatasetInfosDict.from_dataset_card_data(card.data)
    default = local_configs.get_default_config_name()
    data = merge_metadata(None, remote.data, dict(local_configs), dict(infos), default)
    for key, value in card.data.to_dict().items():
        if key not in ("configs", "dataset_info"):
            data[key] = value
    merged = DatasetCard(f"---\n{data.to_yaml()}\n---\n{card.text}")
    return str(merged).encode("utf-8"), kept


def local_files(plan: UploadPlan, readme: bytes) -> dict[str, LocalFile]:
    """The files of ``plan`` as :class:`LocalFile` (sha256 from the verified record), the card as uploaded.

    Example:
        >>> local_files(UploadPlan(Path("out")), b"card")["README.md"].size
        4
    """
    files = {README: LocalFile(README, len(readme), hashlib.sha256(readme).hexdigest(), git_oid=git_blob_id(readme))}
    for path, record in plan.records.items():
        oid = git_blob_id((plan.folder / path).read_bytes()) if record.size <= GIT_BLOB_LIMIT else None
        files[path] = LocalFile(record.path, record.size, record.sha256, record.group, git_oid=oid)
    return files


def _remote_tree(api, repo_id: str, revision: str | None) -> dict[str, RemoteFile]:
    from huggingface_hub.hf_api import RepoFile

    remote = {}
    for entry in api.list_repo_tree(repo_id, repo_type="dataset", revision=revision, recursive=True):
        if isinstance(entry, RepoFile):
            sha256 = entry.lfs.sha256 if entry.lfs is not None else None
            remote[entry.path] = RemoteFile(entry.path, entry.size, sha256, entry.blob_id)
    return remote


@contextlib.contextmanager
def _xet_workers(num_workers: int | None) -> Iterator[None]:
    # hf_xet reads its concurrency from the environment (files chunked and uploaded at once,
    # default 8); a value the user set there wins.
    name = "HF_XET_DATA_MAX_CONCURRENT_FILE_INGESTION"
    if num_workers is None or name in os.environ:
        yield
        return
    os.environ[name] = str(num_workers)
    try:
        yield
    finally:
        os.environ.pop(name, None)


def _opened(handle) -> str | object:
    """What the commit reads for an open, checked file: its ``/proc/self/fd`` path on Linux (the open
    file itself, which keeps Xet uploads: ``huggingface_hub`` sends a file object over plain HTTP),
    else the file object."""
    proc = f"/proc/self/fd/{handle.fileno()}"
    return proc if os.path.isfile(proc) else handle


def push_folder(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
    create_pr: bool = False,
    num_workers: int | None = None,
) -> PushResult:
    """Upload what is missing of an exported folder in batched commits; a failure is one :class:`PushError`.

    ``create_pr`` opens a pull request with the first commit and puts the later ones on it; a
    push cut short resumes with ``revision="refs/pr/N"`` (logged when it opens).

    Example::

        push_folder("hub/clevr_math", "me/clevr-math", private=True).url
        # 'https://huggingface.co/datasets/me/clevr-math/commit/...'
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, OfflineModeIsEnabled

    check_repo_id(repo_id)
    if num_workers is not None and num_workers < 1:
        raise PushError("--num_workers must be at least 1")
    plan = plan_upload(folder, repo_id)
    token = token or get_token()
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN, pass --token or run `hf auth login`, then push again")
    api = HfApi(token=token, endpoint=endpoint)
    message = commit_message or f"Upload {', '.join(plan.configs)}"
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision is not None and not revision.startswith("refs/pr/"):
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        remote = _remote_tree(api, repo_id, revision)
        remote_readme = None
        if README in remote:
            try:
                with tempfile.TemporaryDirectory() as scratch:
                    path = api.hf_hub_download(repo_id, README, repo_type="dataset", revision=revision, local_dir=scratch)
                    remote_readme = Path(path).read_text(encoding="utf-8")
            except EntryNotFoundError:
                remote_readme = None
        readme, kept = _merged_readme(plan.folder / README, remote_readme, repo_id)
        todo = plan_push(local_files(plan, readme), remote, plan.config_dirs)
        data = [item for item in todo.upload if item.path != README]
        batches = commit_batches(data, COMMIT_FILES, COMMIT_BYTES)
        final: list = [CommitOperationDelete(path_in_repo=path) for path in todo.delete]
        if len(data) < len(todo.upload):
            final.insert(0, CommitOperationAdd(path_in_repo=README, path_or_fileobj=readme))
        result = PushResult(f"{api.endpoint}/datasets/{repo_id}", len(todo.upload), len(todo.unchanged), todo.delete)
        target, open_pr = revision, create_pr
        with _xet_workers(num_workers):
            steps = [*batches, *([final] if final else [])]
            for number, step in enumerate(steps, start=1):
                title = message if len(steps) == 1 else f"{message} (part {number}/{len(steps)})"
                if step is final and kept:
                    title += f"; card keeps remote configs {', '.join(kept)}"
                with contextlib.ExitStack() as held:
                    # each file opened (no symlink followed) and checked on the open file, which the
                    # commit then reads: a name swapped after the check is never uploaded
                    operations = step if step is final else [
                        CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=_opened(
                            held.enter_context(open_recorded(plan.folder, plan.records[f.path])))) for f in step]
                    info = api.create_commit(
                        repo_id, operations=operations, commit_message=title, repo_type="dataset",
                        revision=target, create_pr=open_pr, num_threads=num_workers or 5,
                    )
                result.url = getattr(info, "commit_url", str(info))
                if open_pr:
                    target, open_pr = info.pr_revision, False
                    logger.warning("opened %s; if this push is cut short, resume with --revision %s", info.pr_url, target)
    except OfflineModeIsEnabled:
        raise PushError("HF_HUB_OFFLINE is set: unset it to push") from None
    except OwnershipError as exc:  # a file changed or swapped since the plan checked it
        raise PushError(f"{exc}; push uploads only the files export wrote, unchanged: re-export the folder") from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PushError(f"the Hub refused the push of {repo_id} (HTTP {status}): {first}") from None
    except _network_errors() as exc:
        raise PushError(
            f"cannot reach the Hugging Face Hub to push {repo_id} ({type(exc).__name__}: {exc}); "
            "check the network, or use --dry_run to list the files"
        ) from None
    return result
