"""Upload an exported folder to a Hub dataset repository with ``huggingface_hub``.

The upload is one commit: every file of the export (hidden files and folders excluded), plus the
deletion of remote files inside the exported configurations' folders that the export no longer
has (so a configuration re-exported with fewer shards does not keep stale ones, as
``push_to_hub`` does). If the repository already has a card, the ``configs`` and
``dataset_info`` of remote configurations that the export does not hold are merged into the
uploaded card, so pushing one dataset's configurations never hides another's. The uploaded card's
usage examples name the repository (``"REPO_ID"`` in the exported card is replaced).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from datasets.info import DatasetInfosDict
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard

from builder_utils.hub.card import merge_metadata, read_card
from builder_utils.hub.export import README, split_files


class PushError(RuntimeError):
    """A push that cannot be done (bad folder, no token, no network, refused by the Hub)."""


@dataclass
class UploadPlan:
    """What a push uploads: files relative to the folder with their sizes, and the configs."""

    folder: Path
    files: list[tuple[str, int]] = field(default_factory=list)
    configs: list[str] = field(default_factory=list)
    config_dirs: list[str] = field(default_factory=list)

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
    """The card text as uploaded: its usage examples name the repository it is pushed to.

    Export cannot know the repository, so the templates write ``load_dataset("REPO_ID", ...)``.

    Example:
        >>> card_for_repo('load_dataset("REPO_ID", "multihop")', "me/clevr-math")
        'load_dataset("me/clevr-math", "multihop")'
    """
    return text if not repo_id else text.replace(REPO_PLACEHOLDER, f'"{repo_id}"')


def plan_upload(folder: str | os.PathLike, repo_id: str | None = None) -> UploadPlan:
    """Check an exported folder and list what a push would upload, without any network.

    The folder needs a README.md whose YAML has ``configs`` whose data files all exist.
    With ``repo_id``, the README's size is that of the card as uploaded (:func:`card_for_repo`).

    Example:
        >>> plan = plan_upload("hub/clevr_math")   # doctest: +SKIP
        >>> plan.files[0]                           # doctest: +SKIP
        ('README.md', 14021)
    """
    root = Path(folder).expanduser().resolve()
    if not root.is_dir():
        raise PushError(f"{root}: no such folder; export first (`... export --out {folder}`)")
    card = read_card(root / README)
    if card is None:
        raise PushError(f"{root / README}: missing; push uploads a folder written by `export`")
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    if not configs:
        raise PushError(f"{root / README}: the card has no `configs`; re-export the folder")
    config_dirs = []
    for name, entry in configs.items():
        found = split_files(root, entry)
        empty = [split for split, files in found.items() if not files]
        if not found or empty:
            raise PushError(
                f"{root / README}: config {name!r} names data files that are not in the folder "
                f"(split(s) {', '.join(empty) or 'all'}); re-export it or remove it from the card"
            )
        parts = [Path(f).relative_to(root).parts for files in found.values() for f in files]
        config_dirs += [p[0] for p in parts if len(p) > 1]
    plan = UploadPlan(folder=root, configs=list(configs), config_dirs=sorted(set(config_dirs)))
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue  # staging folders of an export in progress, editor files, .cache
        size = path.stat().st_size
        if relative.as_posix() == README and repo_id:
            size = len(card_for_repo(path.read_text(encoding="utf-8"), repo_id).encode("utf-8"))
        plan.files.append((relative.as_posix(), size))
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


def push_folder(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    private: bool = False,
    revision: str | None = None,
    commit_message: str | None = None,
    token: str | None = None,
    endpoint: str | None = None,
) -> str:
    """Upload an exported folder as one commit; return the commit URL.

    The token comes from ``token``, else ``HF_TOKEN`` or the stored login (``hf auth login``);
    ``endpoint`` defaults to ``HF_ENDPOINT`` (huggingface.co).
    Every failure (no token, no network, refused) is a :class:`PushError` with one clear line.

    Example:
        >>> push_folder("hub/clevr_math", "me/clevr-math", private=True)  # doctest: +SKIP
        'https://huggingface.co/datasets/me/clevr-math/commit/...'
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, get_token
    from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, OfflineModeIsEnabled

    plan = plan_upload(folder, repo_id)
    token = token or get_token()
    if not token:
        raise PushError("no Hugging Face token: set HF_TOKEN or run `hf auth login`, then push again")
    api = HfApi(token=token, endpoint=endpoint)
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        if revision is not None and not revision.startswith("refs/pr/"):
            api.create_branch(repo_id, repo_type="dataset", branch=revision, exist_ok=True)
        remote_files = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
        remote_readme = None
        if README in remote_files:
            try:
                with tempfile.TemporaryDirectory() as scratch:
                    path = api.hf_hub_download(
                        repo_id, README, repo_type="dataset", revision=revision, local_dir=scratch
                    )
                    remote_readme = Path(path).read_text(encoding="utf-8")
            except EntryNotFoundError:
                remote_readme = None
        readme, kept = _merged_readme(plan.folder / README, remote_readme, repo_id)
        local = {path for path, _ in plan.files}
        operations: list = [CommitOperationAdd(path_in_repo=README, path_or_fileobj=readme)]
        operations += [
            CommitOperationAdd(path_in_repo=path, path_or_fileobj=str(plan.folder / path))
            for path, _ in plan.files
            if path != README
        ]
        stale = [f for f in remote_files if f.split("/")[0] in plan.config_dirs and "/" in f and f not in local]
        operations += [CommitOperationDelete(path_in_repo=path) for path in stale]
        message = commit_message or f"Upload {', '.join(plan.configs)} ({len(plan.files)} files)"
        if kept:
            message += f"; card keeps remote configs {', '.join(kept)}"
        info = api.create_commit(
            repo_id, operations=operations, commit_message=message, repo_type="dataset", revision=revision
        )
    except OfflineModeIsEnabled:
        raise PushError("HF_HUB_OFFLINE is set: unset it to push") from None
    except HfHubHTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise PushError(f"the Hub refused the push of {repo_id} (HTTP {status}): {first}") from None
    except _network_errors() as exc:
        raise PushError(
            f"cannot reach the Hugging Face Hub to push {repo_id} ({type(exc).__name__}: {exc}); "
            "check the network, or use --dry_run to list the files"
        ) from None
    return getattr(info, "commit_url", str(info))
