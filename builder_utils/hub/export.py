"""Export a builder's configurations to a local folder in the layout ``push_to_hub`` writes.

The folder's layout and what a re-export keeps: README.md (this package). Shards are cut as
``push_to_hub`` cuts them and hold its bytes (:mod:`builder_utils.hub.shard_writer`); every file
goes through :mod:`builder_utils.ownership` (staged, moved into place, recorded, locked). The
entry's group is the configuration: stale files are found by it.
"""

from __future__ import annotations

import glob
import importlib.metadata
import logging
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.compute as pc
from tqdm.auto import tqdm

from builder_utils.datasets_adapter import (DEFAULT_MAX_BATCH_SIZE, MetadataConfigs, convert_file_size_to_int,
                                            get_writer_batch_size_from_data_size, get_writer_batch_size_from_features,
                                            require_decoding, sanitize_patterns)
from builder_utils.hub.card import (
    ASSETS_DIR,
    CardTemplate,
    CardUsage,
    config_entry,
    draw_plots,
    load_card_template,
    merge_metadata,
    ordered_splits,
    read_card,
    render_card,
)
from builder_utils.hub.audio_format import encode_flac
from builder_utils.hub.card_merge import EDITED, card_state, marked_template, merged_card
from builder_utils.hub.derived import DERIVED_LAYOUTS, DerivedLayout, Layouts, resolve
from builder_utils.hub.layout import HubLayout, layout_of
from builder_utils.hub.media import with_join_section, with_section
from builder_utils.hub.trainer_card import trainer_section
from builder_utils.hub.outputs import (
    assemble,
    check_options,
    configs_to_build,
    descriptions as added_descriptions,
    keep_media_of_kept_configs,
)
from builder_utils.hub.plan import ExportPlan
from builder_utils.hub.prompt_config import DEFAULT_AUDIO_RATE, PromptAudioOptions
from builder_utils.hub.shard_writer import ShardWritten, write_parquet_shard
from builder_utils.hub.stats import ConfigStats, card_columns, config_statistics
from builder_utils.options import FilePath, given_path_values, joined_path_values, option, path_values
from builder_utils.ownership import Entry, OutputFolder, OwnershipError
from builder_utils.prompts import DEFAULT_PROMPT_STYLE
from builder_utils.wait_points import wait_point

logger = logging.getLogger(__name__)
#: The advice an inline export gives about its size (``--media shared``): its own logger, so that a
#: caller that chose inline on purpose (the demos) turns off only that.
SIZE_ADVICE = logging.getLogger(f"{__name__}.size_advice")

DEFAULT_MAX_SHARD_SIZE = "500MB"  # push_to_hub's default
# Shards written at once unless num_proc says otherwise (threads; each holds two batches of about
# 100 files in memory). The output does not depend on it.
WRITER_THREADS = 2
README = "README.md"
COMMAND = "export"
# The shard names push_to_hub (and export) write: <config dir>/<split>-NNNNN-of-MMMMM.parquet
SHARD = re.compile(r"^(?P<dir>[^/]+)/(?P<split>\w+(?:\.\w+)*)-(?P<index>\d{5})-of-(?P<count>\d{5})\.parquet$")


class ExportError(ValueError):
    """An export that cannot be done (bad option, missing media file); the message says where."""


@dataclass
class SplitExport:
    """What was written for one split: rows, shard files (relative to the folder) and sizes."""

    rows: int
    shards: list[str]
    parquet_bytes: int
    arrow_bytes: int
    media_bytes: int


@dataclass
class ExportResult:
    """The outcome of :func:`export_builder`: the folder, per config and split what was written."""

    folder: Path
    configs: dict[str, dict[str, SplitExport]] = field(default_factory=dict)
    seconds: float = 0.0
    build_seconds: float = 0.0
    plan: ExportPlan | None = None

    @property
    def parquet_bytes(self) -> int:
        return sum(s.parquet_bytes for splits in self.configs.values() for s in splits.values())

    @property
    def media_bytes(self) -> int:
        return sum(s.media_bytes for splits in self.configs.values() for s in splits.values())

    def summary_line(self) -> str:
        """What export wrote, in the one success line of the command.

        Example:
            >>> ExportResult(Path("out")).summary_line()
            'exported nothing to out'
        """
        if not self.configs:
            return f"exported nothing to {self.folder}"
        parts = [f"{name} ({', '.join(f'{split} {s.rows:,}' for split, s in splits.items())} rows)"
                 for name, splits in self.configs.items()]
        return f"wrote {self.folder}: {'; '.join(parts)}; {self._written()} and the card {README}"

    def _written(self) -> str:
        return f"{self.parquet_bytes / 2**20:,.1f} MiB of Parquet in {self.seconds:.1f} s"


def config_dir(config_name: str) -> str:
    """The folder of a configuration inside the export (``push_to_hub``: ``data`` for ``default``).

    Example:
        >>> config_dir("general"), config_dir("default")
        ('general', 'data')
    """
    return "data" if config_name == "default" else config_name


def _media_columns(features: datasets.Features) -> list[str]:
    return [name for name, feature in features.items() if require_decoding(feature, ignore_decode_attribute=True)]


def media_bytes(dataset: datasets.Dataset, columns: Sequence[str], where: str) -> int:
    """Bytes that embedding adds: stored bytes, or the size of the file each row points to.

    A missing file is an :class:`ExportError` naming its first row. Top-level columns only
    (nested media are embedded all the same).

    Example::

        media_bytes(ds, ["image"], "general/train")   # 1843200
    """
    total = 0
    sizes: dict[str, int] = {}
    for column in columns:
        storage = dataset.data.column(column)
        if not hasattr(storage.type, "get_field_index") or storage.type.get_field_index("path") < 0:
            continue
        for chunk_start, chunk in _chunks(storage):
            stored = chunk.field("bytes")
            paths = chunk.field("path").to_pylist()
            lengths = pc.binary_length(stored).to_pylist()
            for offset, (path, length) in enumerate(zip(paths, lengths)):
                if length is not None:
                    total += length
                    continue
                if path is None:
                    continue
                if path not in sizes:
                    try:
                        sizes[path] = os.path.getsize(path)
                    except OSError:
                        raise ExportError(
                            f"{path}: {column} file of {where} row {chunk_start + offset} not found; "
                            "export embeds every file, so the source images/audio must exist"
                        ) from None
                total += sizes[path]
    return total


def _chunks(column) -> Iterator[tuple[int, object]]:
    start = 0
    for chunk in column.chunks:
        yield start, chunk
        start += len(chunk)


# The Hub's own limit is 50 GB a file; a larger shard is a mistake, not a setting.
MAX_SHARD_SIZE = 50 * 10**9


def _shard_limit(max_shard_size: int | str) -> int:
    """``max_shard_size`` in bytes, in 1..:data:`MAX_SHARD_SIZE`.

    >>> _shard_limit("500MB")
    500000000
    >>> _shard_limit("1PB")
    Traceback (most recent call last):
    ...
    builder_utils.hub.export.ExportError: max_shard_size must be at most 50GB, got '1PB'
    """
    try:
        limit = convert_file_size_to_int(max_shard_size)
    except (TypeError, ValueError):
        raise ExportError(f"max_shard_size must be a size such as 500MB, got {max_shard_size!r}") from None
    if limit <= 0:
        raise ExportError(f"max_shard_size must be positive, got {max_shard_size!r}")
    if limit > MAX_SHARD_SIZE:
        raise ExportError(f"max_shard_size must be at most 50GB, got {max_shard_size!r}")
    return limit


def _writer_batch_size(dataset: datasets.Dataset, nbytes: int) -> int:
    # The batch size push_to_hub derives (small for media, so a batch of embedded files stays small).
    if get_writer_batch_size_from_features is None:
        return DEFAULT_MAX_BATCH_SIZE
    return get_writer_batch_size_from_features(dataset.features) or get_writer_batch_size_from_data_size(
        len(dataset), nbytes
    )


@dataclass(frozen=True)
class ShardJob:
    """One shard to write: its path in the export, its rows (media as paths) and how to write them."""

    name: str
    rows: datasets.Dataset
    batch_size: int
    embed: bool


def plan_split(
    dataset: datasets.Dataset, config_name: str, split: str, max_shard_size: int | str = DEFAULT_MAX_SHARD_SIZE
) -> tuple[SplitExport, list[ShardJob]]:
    """The shards of one split, not yet written (the :class:`SplitExport` fills as they are).

    ``push_to_hub``'s count: ``int(bytes / max_shard_size) + 1``, bytes with the embedded media.

    Example::

        plan_split(ds["train"], "general", "train", "50MB")[1][0].name
        # 'general/train-00000-of-00001.parquet'
    """
    if dataset._indices is not None:  # a filtered/shuffled view: shards must hold its rows in its order
        dataset = dataset.flatten_indices()
    media = _media_columns(dataset.features)
    embedded_media = media_bytes(dataset, media, f"{config_name}/{split}")
    nbytes = dataset.data.nbytes + embedded_media
    num_shards = max(1, min(len(dataset), int(nbytes / _shard_limit(max_shard_size)) + 1))
    batch_size = _writer_batch_size(dataset, nbytes)
    subdir = config_dir(config_name)
    jobs = [
        ShardJob(name=f"{subdir}/{split}-{index:05d}-of-{num_shards:05d}.parquet",
                 rows=dataset.shard(num_shards=num_shards, index=index, contiguous=True),
                 batch_size=batch_size, embed=bool(media))
        for index in range(num_shards)
    ]
    return SplitExport(rows=len(dataset), shards=[], parquet_bytes=0, arrow_bytes=0, media_bytes=embedded_media), jobs


def _write_job(job: ShardJob, folder: Path, audio_format: str, stop: threading.Event) -> ShardWritten:
    path = folder / job.name
    path.parent.mkdir(parents=True, exist_ok=True)
    features = job.rows.features
    flac = (lambda table: encode_flac(table, features)) if job.embed and audio_format == "flac" else None
    table = job.rows.data.table  # a contiguous shard of a split without an indices mapping (plan_split)
    try:
        return write_parquet_shard(table, features, path, job.batch_size, embed=job.embed, transform=flac, stop=stop)
    except OSError as exc:
        if exc.filename and Path(exc.filename) != path:  # a media file, gone or unreadable since the plan
            raise ExportError(f"{exc.filename}: cannot read it for {job.name} ({exc.strerror or exc})") from None
        raise ExportError(f"{path}: cannot write {job.name} ({exc.strerror or exc})") from None


def write_shards(
    jobs: Sequence[ShardJob], folder: str | os.PathLike, *, audio_format: str = "wav", workers: int = 2,
    bar: tqdm | None = None,
) -> list[ShardWritten]:
    """Write the shards, ``workers`` at a time, and return their :class:`ShardWritten`, in order.

    Threads, as reading, Parquet encoding and hashing release the GIL. An exception (or Ctrl-C)
    stops the other shards between two batches.

    Example::

        written = write_shards(plan_split(ds["train"], "general", "train")[1], "staging")
    """
    folder = Path(folder)
    stop = threading.Event()
    results = []
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="shard-writer") as pool:
        futures = [pool.submit(_write_job, job, folder, audio_format, stop) for job in jobs]
        try:
            for future in futures:
                results.append(future.result())
                wait_point("export-shard")
                if bar is not None:
                    bar.update(results[-1].rows)
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
    return results


def write_split(
    dataset: datasets.Dataset,
    folder: str | os.PathLike,
    config_name: str,
    split: str,
    max_shard_size: int | str = DEFAULT_MAX_SHARD_SIZE,
    bar: tqdm | None = None,
    audio_format: str = "wav",
) -> SplitExport:
    """Write one split's shards under ``folder`` (:func:`plan_split`, then :func:`write_shards`).

    Example::

        write_split(ds["train"], "staging", "general", "train", "50MB").shards
        # ['general/train-00000-of-00001.parquet']
    """
    export, jobs = plan_split(dataset, config_name, split, max_shard_size)
    for job, written in zip(jobs, write_shards(jobs, folder, audio_format=audio_format, bar=bar)):
        _add_shard(export, job, written)
    return export


def _add_shard(export: SplitExport, job: ShardJob, written: ShardWritten) -> None:
    export.shards.append(job.name)
    export.parquet_bytes += written.parquet_bytes
    export.arrow_bytes += written.arrow_bytes


def split_files(folder: str | os.PathLike, entry: Mapping) -> dict[str, list[str]]:
    """The files a card's ``configs`` entry names under ``folder``, by split (globs expanded).

    Example:
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp()); (out / "general").mkdir()
        >>> _ = (out / "general" / "train-00000-of-00001.parquet").write_bytes(b"")
        >>> found = split_files(out, {"data_files": [{"split": "train", "path": "general/train-*"}]})
        >>> [Path(f).relative_to(out).as_posix() for f in found["train"]]
        ['general/train-00000-of-00001.parquet']
    """
    data_files = entry.get("data_files")
    if not data_files:
        return {}
    found: dict[str, list[str]] = {}
    for split, patterns in sanitize_patterns(data_files).items():
        files: list[str] = []
        for pattern in patterns:
            files += sorted(glob.glob(os.path.join(os.fspath(folder), pattern), recursive=True))
        found[split] = files
    return found


def _card_usage(layout: HubLayout | None, media: str, config: str, media_feature) -> CardUsage:
    """The Usage section's context: the configuration it loads and how its media are reached."""
    undecoded = layout.media_column if layout is not None and isinstance(media_feature, datasets.Audio) else None
    if media == "shared" and layout is not None:
        return CardUsage(config, layout.media_config, layout.key, undecoded)
    return CardUsage(config, undecoded=undecoded)


def _generator_name() -> str:
    try:
        version = importlib.metadata.version("clevr-clotho-qa")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    return f"`builder_utils.hub` of clevr-clotho-qa {version}"


def _check_configs(builder_cls, configs: Sequence[str] | None, found: Layouts) -> list[str]:
    available = [c.name for c in builder_cls.BUILDER_CONFIGS]
    if configs:
        available += list(found.derived)  # asked for by name only: the default export stays the builder's
    if not configs:
        return available
    unknown = [c for c in configs if c not in available]
    if unknown:
        raise ExportError(
            f"unknown {builder_cls.__name__} config(s) {', '.join(map(repr, unknown))}; valid: {', '.join(available)}"
        )
    reserved = [c for c in configs if c == ASSETS_DIR or c.startswith(".")]
    if reserved:
        raise ExportError(f"config name(s) {', '.join(reserved)} collide with the export's own folders")
    return list(dict.fromkeys(configs))


@dataclass
class ExportPaths:
    """The paths ``export`` reads and writes, each with its role (the subcommands' flags come from here)."""

    data_dir: str | None = option(None, FilePath(), "the local release/CLEVR folder the builder reads",
                                  group="inputs and outputs", role="input_dir")
    out: str = option(None, FilePath(), "export folder (created; files export did not write, other configs and "
                      "card edits are kept)", group="inputs and outputs", role="output_dir", flag={"required": True})
    cache_dir: str | None = option(None, FilePath(), "builder cache to reuse (default: a temporary one, inside "
                                   "the export's staging)", group="inputs and outputs", role="cache")


def export_builder(
    builder_cls: type[datasets.DatasetBuilder],
    out_dir: str | os.PathLike,
    *,
    card_template: str | os.PathLike | CardTemplate,
    data_dir: str | os.PathLike | None = None,
    configs: Sequence[str] | None = None,
    num_proc: int | None = None,
    max_shard_size: int | str = DEFAULT_MAX_SHARD_SIZE,
    cache_dir: str | os.PathLike | None = None,
    builder_kwargs: Mapping | None = None,
    progress: bool = True,
    media: str = "inline",
    audio_format: str = "wav",
    plan_only: bool = False,
    prompt_style: str = DEFAULT_PROMPT_STYLE,
    given: Callable[[str], Mapping[str, Mapping[str, datasets.Dataset]]] | None = None,
    prompt_audio_rate: int = DEFAULT_AUDIO_RATE,
    layouts: Sequence[DerivedLayout] = DERIVED_LAYOUTS,
) -> ExportResult:
    """Build ``configs`` (default: all) of ``builder_cls`` and export them with their card.

    ``num_proc``: ``download_and_prepare``'s, and the shards written at once. ``cache_dir``
    defaults to a temporary one (builders' caches are keyed by path; a fresh build is cheap next
    to embedding). The refusals about the folder come before any build. ``plan_only`` builds and
    writes nothing. ``given(cache_dir)`` returns ``prompts`` rows made elsewhere (config -> split
    -> rows, e.g. ``clevr_math.stream``'s): written as they are, their source configurations unbuilt.
    ``media``, ``audio_format``, ``prompt_*``: README.md, "Media layouts" and "Training layouts".

    Example::

        from clevr_math import ClevrMath
        result = export_builder(ClevrMath, "hub/clevr_math", card_template="clevr_math",
                                data_dir="CLEVR_v1.0", configs=["multihop"])
        sorted(result.configs["multihop"])   # ['test', 'train', 'validation']
    """
    started = time.perf_counter()
    found = resolve(layout_of(builder_cls), layouts)
    names = _check_configs(builder_cls, configs, found)
    check_options(found.layout, builder_cls.__name__, media, audio_format, prompt_style)
    try:
        PromptAudioOptions(prompt_audio_rate=prompt_audio_rate)
    except ValueError as exc:
        raise ExportError(f"--{exc}") from None
    template = card_template if isinstance(card_template, CardTemplate) else load_card_template(card_template)
    _shard_limit(max_shard_size)  # a bad size fails before any build
    out = Path(out_dir).expanduser().absolute()
    if out.exists() and not out.is_dir():
        raise ExportError(f"{out}: --out exists and is not a folder")
    try:
        # the builder options' paths (a template folder, released questions) are inputs too
        paths = joined_path_values(path_values(ExportPaths(data_dir, out, cache_dir)),
                                   given_path_values(builder_cls.BUILDER_CONFIG_CLASS, builder_kwargs))
        with OutputFolder.open(out, command=COMMAND, declared=paths) as folder:
            # The lock first, then what a killed export left (its pending moves are finished), then
            # every refusal about the folder, before any work.
            state = card_state(folder)
            existing = read_card(out / README)
            _check_folders(folder, [config_dir(n) for n in names] + [ASSETS_DIR])
            result = _export_into(folder, builder_cls, names, found, template, state, existing, data_dir, configs,
                                  num_proc, max_shard_size, cache_dir, builder_kwargs, progress, media, audio_format,
                                  plan_only, prompt_style, given, prompt_audio_rate)
    except OwnershipError as exc:
        raise ExportError(str(exc)) from None
    result.seconds = time.perf_counter() - started
    return result


def _export_into(folder, builder_cls, names, found, template, state, existing, data_dir, configs, num_proc,
                 max_shard_size, cache_dir, builder_kwargs, progress, media, audio_format, plan_only, prompt_style,
                 given, prompt_audio_rate) -> ExportResult:
    """The export's work inside its open output folder (see :func:`export_builder`)."""
    out, staging = folder.root, folder.stage
    layout, derived = found.layout, found.derived
    manifest = folder.record
    result = ExportResult(folder=out)
    if cache_dir is None:
        cache_dir = folder.scratch("cache")
    hand_set = set(existing.data.to_dict()) if existing is not None and state == "edited" else set()
    pretty_name = existing.data.get("pretty_name") if "pretty_name" in hand_set else template.metadata.get("pretty_name")
    template = marked_template(template, hand_set)
    infos: dict[str, datasets.DatasetInfo] = {}
    entries: dict[str, dict] = {}
    built: dict[str, datasets.DatasetDict] = {}
    data_source, media_feature = "", None
    made = dict(given(os.fspath(cache_dir))) if given is not None else {}
    for name in configs_to_build([n for n in names if n not in made], found):
        build_started = time.perf_counter()
        builder = builder_cls(
            config_name=name,
            data_dir=None if data_dir is None else os.fspath(data_dir),
            cache_dir=os.fspath(cache_dir),
            **dict(builder_kwargs or {}),
        )
        builder.download_and_prepare(num_proc=num_proc)
        built[name] = builder.as_dataset()
        # What the rows were made from, for the card (a builder without data_source() says nothing).
        data_source = data_source or getattr(builder, "data_source", lambda: "")()
        if media_feature is None and layout is not None:
            media_feature = next(iter(built[name].values())).features.get(layout.media_column)
        result.build_seconds += time.perf_counter() - build_started
    if media_feature is None and layout is not None and made:
        media_feature = next(iter(next(iter(made.values())).values())).features.get(layout.media_column)
    outputs, result.plan = assemble(names, built, found, media, prompt_style, given=made,
                                    audio_rate=prompt_audio_rate)
    if media == "shared" and existing is not None:
        on_card = MetadataConfigs.from_dataset_card_data(existing.data)
        kept = {n: split_files(out, e) for n, e in on_card.items() if n not in outputs}
        old_media = split_files(out, on_card[layout.media_config]) if layout.media_config in on_card else {}
        keep_media_of_kept_configs(outputs, found, kept, old_media)
    logger.info("projected size of the export (--media %s):\n%s", media, result.plan.table())
    if result.plan.warning():
        SIZE_ADVICE.warning("%s", result.plan.warning())
    if plan_only:
        return result
    # Every shard of every configuration, written by a pool: one big media split would
    # otherwise leave a core idle.
    planned: list[tuple[SplitExport, ShardJob]] = []
    for name, built_splits in outputs.items():
        splits = ordered_splits(built_splits)
        result.configs[name] = {}
        for split in splits:
            export, jobs = plan_split(built_splits[split], name, split, max_shard_size)
            result.configs[name][split] = export
            planned += [(export, job) for job in jobs]
    rows = sum(export.rows for splits in result.configs.values() for export in splits.values())
    with tqdm(total=rows, unit=" rows", desc="export", disable=not progress, leave=True) as bar:
        written = write_shards([job for _, job in planned], staging, audio_format=audio_format,
                               workers=num_proc or WRITER_THREADS, bar=bar)
    hashes = {}
    for (export, job), shard in zip(planned, written):
        _add_shard(export, job, shard)
        hashes[job.name] = shard.sha256
    for name, built_splits in outputs.items():
        infos[name] = _dataset_info(name, built_splits, result.configs[name])
        entries[name] = config_entry(config_dir(name), ordered_splits(built_splits))
    names = list(outputs)  # with the media configuration
    del built, outputs

    # The configurations of question rows: the card's default and its Usage examples are one of them.
    question_configs = [n for n in entries if n not in derived and (layout is None or n != layout.media_config)]
    card_data = merge_metadata(
        template, existing.data if existing else None, entries, infos, builder_cls.DEFAULT_CONFIG_NAME,
        fallback_default=(question_configs or list(entries))[0],
    )
    card_configs = MetadataConfigs.from_dataset_card_data(card_data)
    all_configs = _display_order(builder_cls, card_configs)
    stats: dict[str, ConfigStats] = {}
    plots: dict[str, list[str]] = {}
    for name in all_configs:
        root = staging if name in entries else out
        files = split_files(root, card_configs[name])
        files = {s: f for s, f in files.items() if f and all(p.endswith(".parquet") for p in f)}
        if files:
            stats[name] = config_statistics(name, {s: files[s] for s in ordered_splits(files)}, *card_columns(builder_cls))
            plots[name] = draw_plots(staging, stats[name], pretty_name)
    descriptions = {c.name: c.description or "" for c in builder_cls.BUILDER_CONFIGS}
    descriptions |= added_descriptions(found)
    default = card_configs.get_default_config_name()
    card = render_card(
        template, card_data, all_configs, stats, descriptions, plots, default, _generator_name(),
        usage=_card_usage(layout, media, default if default in question_configs else (question_configs or [default])[0],
                          media_feature),
        data_source=data_source,
    )
    if media == "shared":
        # Question configurations name their file, and so do the derived ones whose layout says so.
        card = with_join_section(card, layout, [n for n in entries if n != layout.media_config
                                                and (n not in derived or derived[n].layout.names_files)])
    training = (trainer_section(found, all_configs, media, prompt_style, prompt_audio_rate)
                if layout is not None else None)
    if training:
        card = with_section(card, training)
    card = merged_card(card, existing, state)
    (staging / README).write_text(str(card), encoding="utf-8")
    owners = {config_dir(n): n for n in card_configs}
    owners.update({path: name for name, paths in plots.items() for path in paths})
    # Stale candidates: every old file of a re-exported configuration, and the old plots of
    # every configuration whose plots were drawn again.
    replaced = set(entries) | {(ASSETS_DIR, name) for name in plots}
    _commit(folder, staging, _staged_files(staging, owners), hashes, replaced, state)
    return result


def _dataset_info(name: str, built: datasets.DatasetDict, written: Mapping[str, SplitExport]) -> datasets.DatasetInfo:
    # The fields push_to_hub records: sizes of the embedded Arrow data and of the Parquet files.
    split_dict = datasets.SplitDict()
    for split, export in written.items():
        split_dict.add(datasets.SplitInfo(name=split, num_bytes=export.arrow_bytes, num_examples=export.rows))
    download = sum(s.parquet_bytes for s in written.values())
    arrow = sum(s.arrow_bytes for s in written.values())
    features = next(iter(built.values())).features
    return datasets.DatasetInfo(
        config_name=name, features=features, splits=split_dict, download_size=download, dataset_size=arrow,
    )


def _display_order(builder_cls, configs: Mapping[str, dict]) -> list[str]:
    ours = [c.name for c in builder_cls.BUILDER_CONFIGS if c.name in configs]
    return ours + sorted(c for c in configs if c not in ours)


def _staged_files(staging: Path, owners: Mapping[str, str]) -> dict[str, str | None]:
    """Every file written in ``staging`` but hidden ones, with its owner: by path (plots) or top folder (shards)."""
    files = {}
    for path in sorted(staging.rglob("*")):
        relative = path.relative_to(staging)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        name = relative.as_posix()
        files[name] = owners.get(name, owners.get(relative.parts[0]))
    return files


def _check_folders(folder: OutputFolder, folders: Sequence[str]) -> None:
    """The commit's refusals made before the build where the names are known (symlink, foreign shard)."""
    for name in folders:
        path = folder.root / name
        if path.is_symlink() or (path.exists() and not path.is_dir()):
            raise ExportError(f"{path}: export writes its folder {name}/ there, and this is a symlink or a file; "
                              "move it away")
        if not path.is_dir():
            continue
        for item in sorted(path.iterdir()):
            # a foreign file at a shard name is refused now; one of ours edited since is checked
            # by the commit only if this export writes that very name (else it stays, unremoved)
            if SHARD.match(f"{name}/{item.name}") and f"{name}/{item.name}" not in folder.record:
                folder.check(f"{name}/{item.name}")


def _commit(
    folder: OutputFolder, staging: Path, written: Mapping[str, str | None], hashes: Mapping[str, str],
    replaced: set, state: str,
) -> None:
    """Move the staged files in, remove our stale ones, record it (journaled: a kill -9 is finished next run).

    Stale: a recorded file not written again whose configuration, or ``(top folder, configuration)``
    (a plot), is in ``replaced``; removed only while unchanged. The hand-merged card is the one
    changed file replaced.
    """

    def is_replaced(entry: Entry) -> bool:
        return entry.command == COMMAND and (
            entry.group in replaced or (entry.path.split("/")[0], entry.group) in replaced)

    stale = [path for path, entry in folder.record.items() if path not in written and is_replaced(entry)]
    merged = {README: written[README]} if state == EDITED and README in written else {}
    folder.add({p: g for p, g in written.items() if p not in merged}, hashes=hashes, remove=stale)
    folder.add(merged, checked=True)
