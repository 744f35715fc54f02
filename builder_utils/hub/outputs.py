"""Which configurations an export writes, in which layout, from the configurations it built.

The layouts, and why shared ``prompts`` rows lack ``verl_prompt``: README.md (this package),
"Media layouts" and "Training layouts".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import datasets
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from builder_utils.datasets_adapter import dataset_from_table, table_cast
from builder_utils.hub.derived import Layouts
from builder_utils.hub.layout import AUDIO_FORMATS, MEDIA_LAYOUTS, HubLayout
from builder_utils.hub.media import media_rows, question_columns_only
from builder_utils.hub.plan import ExportPlan, plan_export
from builder_utils.prompts import DEFAULT_PROMPT_STYLE, prompt_style

Splits = Mapping[str, datasets.Dataset]


def check_options(layout: HubLayout | None, builder_name: str, media: str, audio_format: str,
                  style: str = DEFAULT_PROMPT_STYLE) -> None:
    """Raise ValueError for an unknown layout or format, or one the builder cannot serve.

    Example:
        >>> check_options(None, "X", "inline", "wav")
        >>> check_options(None, "X", "shared", "wav")
        Traceback (most recent call last):
        ...
        ValueError: X declares no HUB_LAYOUT (its media column and key): --media shared is not available
    """
    if media not in MEDIA_LAYOUTS:
        raise ValueError(f"--media must be one of {', '.join(MEDIA_LAYOUTS)}, got {media!r}")
    if audio_format not in AUDIO_FORMATS:
        raise ValueError(f"--audio_format must be one of {', '.join(AUDIO_FORMATS)}, got {audio_format!r}")
    if layout is None and media == "shared":
        raise ValueError(f"{builder_name} declares no HUB_LAYOUT (its media column and key): --media shared is not available")
    try:
        prompt_style(style)
    except ValueError as exc:
        raise ValueError(f"--prompt_style: {exc}") from None


def configs_to_build(names: Sequence[str], found: Layouts) -> list[str]:
    """The builder configurations to build for the requested output configurations.

    Example:
        >>> from builder_utils.hub.derived import resolve
        >>> configs_to_build(["multihop", "conversations"], resolve(HubLayout("image", "image_filename", "images",
        ...                  conversations_from="general", turn={"user": "q", "assistant": "a"})))
        ['multihop', 'general']
    """
    derived = found.derived
    wanted = [n for n in names if n not in derived]
    for name in names:
        if name in derived and derived[name].source not in wanted:
            wanted.append(derived[name].source)
    return wanted


def assemble(
    names: Sequence[str], built: Mapping[str, Splits], found: Layouts, media: str,
    style: str = DEFAULT_PROMPT_STYLE, given: Mapping[str, Splits] | None = None, audio_rate: int | None = None,
) -> tuple[dict[str, Splits], ExportPlan]:
    """The output configurations (name -> split -> rows, media as paths) and the size plan.

    ``given``: rows made elsewhere (a stream's ``prompts``), used as they are.

    Example:
        >>> from builder_utils.hub.derived import resolve
        >>> rows = datasets.Dataset.from_dict({"image_filename": ["a.png"], "image": [None], "question": ["?"]})
        >>> outputs, plan = assemble(["general"], {"general": {"train": rows}},
        ...                          resolve(HubLayout("image", "image_filename", "images")), "shared")
        >>> {name: list(splits["train"].column_names) for name, splits in outputs.items()}
        {'general': ['image_filename', 'question'], 'images': ['image_filename', 'image']}
    """
    layout, derived = found.layout, found.derived
    questions = {n: built[n] for n in names if n not in derived}
    # In the registry's order, each layout's configurations in the order asked.
    wanted = [n for kind in found.registered for n in names if n in derived and derived[n].layout is kind]
    given = dict(given or {})
    misplaced = [n for n in given if n not in wanted or not derived[n].layout.takes_given]
    if misplaced:
        raise ValueError(f"rows can be given for the prompts configurations only, not {', '.join(misplaced)}")
    if given and media == "shared":
        raise ValueError("--media shared joins rows to the images of built configurations; streamed prompts "
                         "rows carry their own images: export them with --media inline")
    # Built with their media list (the plan needs both layouts); only inline ones are worth decoding.
    rate = audio_rate if media == "inline" else None
    rows = {n: given[n] if n in given else derived[n].layout.rows(built[derived[n].source], found, style, rate)
            for n in wanted}
    # Shared rows that name their files: the media configuration must hold those too.
    named = {**questions, **{n: built[derived[n].source] for n in wanted
                             if derived[n].layout.names_files and n not in given}}
    shared_media = media_rows(named, layout) if layout is not None and named else None
    plan = plan_export(questions, layout, media, media=shared_media,
                       derived=[(n, rows[n], derived[n].layout.media_list(found), derived[n].layout.names_files)
                                for n in wanted])
    outputs: dict[str, Splits] = {}
    for name, splits in questions.items():
        outputs[name] = splits if media == "inline" else {s: question_columns_only(d, layout) for s, d in splits.items()}
    if media == "shared" and shared_media:
        outputs[layout.media_config] = shared_media
    for name, splits in rows.items():
        outputs[name] = splits if media == "inline" else derived[name].layout.shared(splits, found)
    return outputs, plan


def descriptions(found: Layouts) -> dict[str, str]:
    """Card descriptions of the configurations an export adds to the builder's.

    Example:
        >>> from builder_utils.hub.derived import resolve
        >>> descriptions(resolve(None))
        {}
    """
    layout = found.layout
    if layout is None:
        return {}
    added = {layout.media_config: f"Each media file once (`{layout.key}`, `{layout.media_column}`); "
                                 "the question configurations of a shared export name their file."}
    for name, derived in found.derived.items():
        added[name] = derived.layout.description(layout, derived.source)
    return added


def _parquet_table(files: Sequence[str], columns: Sequence[str] | None = None) -> pa.Table | None:
    tables = [pq.read_table(path, columns=columns) for path in files]
    return pa.concat_tables(tables) if tables else None


def keep_media_of_kept_configs(
    outputs: dict[str, Splits], found: Layouts, kept: Mapping[str, Mapping[str, Sequence[str]]],
    old_media: Mapping[str, Sequence[str]],
) -> None:
    """Add the files that ``kept`` shared configurations name, from ``old_media``, to the new media configuration.

    Else the new one would lack them. A kept file found nowhere is a ValueError naming it::

        keep_media_of_kept_configs(outputs, found, {"multihop": {"train": [shard, ...]}},
                                   {"train": ["OUT/images/train-00000-of-00001.parquet"]})
    """
    layout = found.layout
    new = outputs.setdefault(layout.media_config, {})
    lists = (kind.media_list(found) for kind in found.registered)
    carried = {layout.media_column, *(column for column in lists if column)}
    have = {key for rows in new.values() for key in rows.data.column(layout.key).to_pylist()}
    wanted: set = set()
    for config, splits in kept.items():
        for files in splits.values():
            names = pq.read_schema(files[0]).names if files else []
            if carried & set(names) or layout.key not in names:
                continue  # an inline configuration (or a conversation one) carries its own media
            wanted |= set(_parquet_table(files, [layout.key]).column(layout.key).to_pylist()) - have
    if not wanted:
        return
    found: set = set()
    for split, files in old_media.items():
        table = _parquet_table(files)
        if table is None:
            continue
        table = table.filter(pc.is_in(table.column(layout.key), pa.array(sorted(wanted), table.schema.field(layout.key).type)))
        if not table.num_rows:
            continue
        found |= set(table.column(layout.key).to_pylist())
        features = new[split].features if split in new else datasets.Features.from_arrow_schema(table.schema)
        table = table_cast(table.select(list(features)), features.arrow_schema)
        if split in new:
            table = pa.concat_tables([new[split].data.table, table])
        table = table.sort_by(layout.key).combine_chunks()
        new[split] = dataset_from_table(table, features, split)
    missing = wanted - found
    if missing:
        raise ValueError(
            f"the folder keeps shared configuration(s) {', '.join(sorted(kept))} naming {len(missing)} file(s) that "
            f"neither this export nor the folder's {layout.media_config!r} configuration holds (e.g. {sorted(missing)[0]!r}); "
            "export those configurations again in the same run"
        )
