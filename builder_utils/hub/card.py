"""Dataset cards: our templates filled with what was exported, merged with an existing card.

The placeholders and ``if-exported`` parts: README.md (this package). Export adds
``size_categories``, ``configs`` and ``dataset_info`` to the YAML, in the form ``push_to_hub`` writes them.
"""

from __future__ import annotations

import importlib.resources
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import datasets
import yaml
from huggingface_hub import DatasetCard, DatasetCardData

from builder_utils.cli_support import DISTRIBUTION
from builder_utils.datasets_adapter import DatasetInfosDict, MetadataConfigs
from builder_utils.hub.card_metadata import metadata_problems
from builder_utils.hub.plots import bar_chart
from builder_utils.hub.stats import ConfigStats, Distribution

REQUIRED_KEYS = ("license", "pretty_name", "task_categories", "language", "tags", "source_datasets")
# Keys export computes; a template must not set them.
COMPUTED_KEYS = ("configs", "dataset_info", "size_categories")
PLACEHOLDERS = ("configs_table", "features_table", "statistics", "total_rows", "default_config", "generator",
                "usage_load", "usage_config", "data_source", "install")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_CONDITIONAL = re.compile(r"^<!-- (?P<kind>if|unless)-exported: (?P<names>[\w,]+) -->\n(?P<body>.*?)"
                          r"^<!-- /(?P=kind)-exported -->\n?", re.S | re.M)
ASSETS_DIR = "assets"
TABLE_ROWS = 15  # values shown in an answer table; the rest is one "other" row
PLOT_ROWS = 25
SPLIT_ORDER = ("train", "validation", "test")


class CardError(ValueError):
    """A card template or an existing README that cannot be used; the message names the file."""


@dataclass(frozen=True)
class CardTemplate:
    """A parsed card template: its file, YAML metadata and Markdown body."""

    path: str
    metadata: dict
    body: str


def template_path(name_or_path: str | os.PathLike) -> str:
    """The file of a shipped card template (``"clevr_math"``, ``"clotho_aqa"``) or a path.

    Example:
        >>> os.path.basename(template_path("clevr_math"))
        'clevr_math.md'
    """
    text = os.fspath(name_or_path)
    if os.path.sep in text or text.endswith(".md") or os.path.isfile(text):
        return text
    shipped = importlib.resources.files("dataset_cards") / f"{text}.md"
    if not shipped.is_file():
        available = sorted(p.name[:-3] for p in importlib.resources.files("dataset_cards").iterdir() if p.name.endswith(".md"))
        raise CardError(f"no card template named {text!r}; shipped: {', '.join(available)} (or pass a path to a .md file)")
    return str(shipped)


def load_card_template(name_or_path: str | os.PathLike) -> CardTemplate:
    """Read and check a card template: YAML front matter with the required keys, known placeholders.

    Example:
        >>> sorted(load_card_template("clotho_aqa").metadata)[:2]
        ['annotations_creators', 'language']
    """
    path = template_path(name_or_path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CardError(f"{path}: cannot read the card template ({exc.strerror})") from None
    lines = text.split("\n")
    after_first = [line.strip() for line in lines[1:]]
    if lines[0].strip() != "---" or "---" not in after_first:
        raise CardError(f"{path}: line 1: a card template starts with YAML front matter between '---' lines")
    end = after_first.index("---") + 1
    try:
        metadata = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 2}" if mark is not None else "front matter"
        raise CardError(f"{path}: {where}: invalid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(metadata, dict):
        raise CardError(f"{path}: the front matter must be a YAML mapping")
    missing = [key for key in REQUIRED_KEYS if not metadata.get(key)]
    if missing:
        raise CardError(f"{path}: front matter lacks {', '.join(missing)} (required: {', '.join(REQUIRED_KEYS)})")
    computed = [key for key in COMPUTED_KEYS if key in metadata]
    if computed:
        raise CardError(f"{path}: front matter sets {', '.join(computed)}, which export computes; remove them")
    problems = metadata_problems(metadata)
    if problems:
        raise CardError(f"{path}: front matter: {'; '.join(problems)}")
    body = "\n".join(lines[end + 1 :])
    for number, line in enumerate(lines[end + 1 :], start=end + 2):
        for match in _PLACEHOLDER.finditer(line):
            if match.group(1) not in PLACEHOLDERS:
                raise CardError(
                    f"{path}: line {number}: unknown placeholder {{{{{match.group(1)}}}}}; "
                    f"known: {', '.join(PLACEHOLDERS)}"
                )
    return CardTemplate(path=path, metadata=metadata, body=body)


def read_card(path: str | os.PathLike) -> DatasetCard | None:
    """The dataset card at ``path`` (None if there is none); an unreadable one is an error.

    Example:
        >>> read_card("/nonexistent/README.md") is None
        True
    """
    path = Path(path)
    if not path.is_file():
        return None
    try:
        card = DatasetCard(path.read_text(encoding="utf-8"))
        MetadataConfigs.from_dataset_card_data(card.data)
        DatasetInfosDict.from_dataset_card_data(card.data)
    except Exception as exc:  # huggingface_hub and datasets raise several types for bad YAML
        raise CardError(
            f"{path}: the existing card cannot be parsed ({exc}); fix or remove it, "
            "export will not overwrite a card whose configs it cannot keep"
        ) from None
    return card


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` bucket for a number of rows.

    Example:
        >>> size_category(120), size_category(73_000)
        ('n<1K', '10K<n<100K')
    """
    buckets = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
               (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B")]
    for limit, name in buckets:
        if rows < limit:
            return name
    return "n>1T" if rows > 1_000_000_000_000 else "1B<n<10B"


def config_entry(config_name: str, splits: Iterable[str]) -> dict:
    """The ``configs`` entry ``push_to_hub`` writes for a configuration's splits.

    Example:
        >>> config_entry("multihop", ["train", "test"])
        {'data_files': [{'split': 'train', 'path': 'multihop/train-*'}, {'split': 'test', 'path': 'multihop/test-*'}]}
    """
    return {"data_files": [{"split": split, "path": f"{config_name}/{split}-*"} for split in splits]}


def merge_metadata(
    template: CardTemplate | None,
    existing: DatasetCardData | None,
    configs: Mapping[str, dict],
    infos: Mapping[str, datasets.DatasetInfo],
    default_config: str | None,
    fallback_default: str | None = None,
) -> DatasetCardData:
    """The card's YAML: the template's keys over the existing card's, whose other configurations stay.

    Without ``default_config`` among them, the existing default stays, else ``fallback_default``
    (an exported one) gets it: a card always names a default that is there.

    Example:
        >>> data = merge_metadata(None, None, {"a": config_entry("a", ["train"])}, {}, "a")
        >>> data["configs"]
        [{'config_name': 'a', 'data_files': [{'split': 'train', 'path': 'a/train-*'}], 'default': True}]
    """
    old = existing.to_dict() if existing is not None else {}
    merged_configs = MetadataConfigs.from_dataset_card_data(existing) if existing is not None else MetadataConfigs()
    merged_infos = DatasetInfosDict.from_dataset_card_data(existing) if existing is not None else DatasetInfosDict()
    for name, entry in configs.items():
        merged_configs[name] = {key: value for key, value in entry.items() if key != "default"}
    merged_infos.update(infos)
    if default_config not in merged_configs and not any(e.get("default") for e in merged_configs.values()):
        default_config = fallback_default
    if default_config in merged_configs:
        for entry in merged_configs.values():
            entry.pop("default", None)
        merged_configs[default_config]["default"] = True

    data = {key: value for key, value in old.items() if key not in ("configs", "dataset_info")}
    if template is not None:
        data.update(template.metadata)
    totals = [info.splits.total_num_examples for info in merged_infos.values() if info.splits]
    if totals:
        data["size_categories"] = [size_category(max(totals))]
    card_data = DatasetCardData(**data)
    # Through the libraries' own writers, so the YAML is exactly what push_to_hub would write.
    DatasetInfosDict({name: merged_infos[name] for name in sorted(merged_infos)}).to_dataset_card_data(card_data)
    MetadataConfigs(merged_configs).to_dataset_card_data(card_data)
    return card_data


# -- body -----------------------------------------------------------------------------------


def feature_type(feature) -> str:
    """A short human name for a ``datasets`` feature type.

    Example:
        >>> feature_type(datasets.List(datasets.Value("int64")))
        'list of int64'
    """
    if isinstance(feature, datasets.Value):
        return feature.dtype
    if isinstance(feature, datasets.ClassLabel):
        names = feature.names
        shown = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
        return f"ClassLabel ({len(names)}: {shown})"
    if isinstance(feature, datasets.Audio):
        return f"Audio ({feature.sampling_rate} Hz)" if feature.sampling_rate else "Audio"
    if isinstance(feature, datasets.Image):
        return "Image"
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{k}: {feature_type(v)}" for k, v in feature.items()) + "}"
    if isinstance(feature, list):
        return f"list of {feature_type(feature[0])}"
    inner = getattr(feature, "feature", None)
    if inner is not None:
        return f"list of {feature_type(inner)}"
    return type(feature).__name__


def ordered_splits(names: Iterable[str]) -> list[str]:
    """Split names in the usual order (train, validation, test), then any others sorted.

    Example:
        >>> ordered_splits(["test", "extra", "train"])
        ['train', 'test', 'extra']
    """
    names = list(dict.fromkeys(names))
    return [s for s in SPLIT_ORDER if s in names] + sorted(s for s in names if s not in SPLIT_ORDER)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Iterable[Sequence]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _count(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def configs_table(
    configs: Sequence[str],
    stats: Mapping[str, ConfigStats],
    descriptions: Mapping[str, str],
    default_config: str | None,
) -> str:
    """Markdown table: configuration, description and rows per split.

    Example:
        >>> print(configs_table(["a"], {}, {"a": "All rows."}, "a").splitlines()[2])
        | `a` (default) | All rows. |  |
    """
    splits = ordered_splits(s for c in configs if c in stats for s in stats[c].rows)
    rows = []
    for name in configs:
        label = f"`{name}`" + (" (default)" if name == default_config else "")
        counts = stats[name].rows if name in stats else {}
        total = stats[name].total if name in stats else None
        rows.append([label, descriptions.get(name, ""), *[_count(counts.get(s)) for s in splits], _count(total)])
    return _table(["configuration", "description", *splits, "total"], rows)


def features_table(stats: Mapping[str, ConfigStats]) -> str:
    """Markdown table: every column, its type, and the configurations that have it.

    Example:
        >>> features_table({})
        '| column | type | configurations |\\n|---|---|---|'
    """
    seen: dict[str, dict[str, list[str]]] = {}
    for name, config in stats.items():
        for column, feature in config.features.items():
            seen.setdefault(column, {}).setdefault(feature_type(feature), []).append(name)
    rows = []
    for column, types in seen.items():
        for kind, names in types.items():
            where = "all" if len(names) == len(stats) else ", ".join(f"`{n}`" for n in names)
            rows.append([f"`{column}`", kind, where])
    return _table(["column", "type", "configurations"], rows)


def _distribution_table(distribution: Distribution, splits: Sequence[str], limit: int) -> str:
    rows = [
        [f"`{value}`" if value and not value.startswith("(") else value, *[_count(c.get(s, 0)) for s in splits], _count(sum(c.values()))]
        for value, c in distribution.top(limit)
    ]
    return _table([distribution.column, *splits, "total"], rows)


def plot_name(config_name: str, column: str) -> str:
    """The card-relative path of a configuration's plot of one column.

    Example:
        >>> plot_name("general", "label")
        'assets/general-label.png'
    """
    return f"{ASSETS_DIR}/{config_name}-{column}.png"


def plot_title(column: str, is_answer: bool) -> str:
    """The title of a distribution plot: what is counted, per which column.

    Example:
        >>> plot_title("label", True), plot_title("majority_answer", True), plot_title("template", False)
        ('Rows per answer (column label)', 'Rows per majority answer', 'Rows per template')
    """
    if not is_answer or "answer" in column:
        return f"Rows per {column.replace('_', ' ')}"
    return f"Rows per answer (column {column})"


def draw_plots(folder: str | os.PathLike, stats: ConfigStats, dataset: str | None = None) -> list[str]:
    """Draw a configuration's distribution plots under ``folder``; return their relative paths.

    ``dataset`` (``pretty_name``) goes in each subtitle, so a plot read on its own says what it shows.

    Example::

        draw_plots("staging", stats, "CLEVR-Math")
        # -> ['assets/general-label.png', 'assets/general-category.png', 'assets/general-template.png']
    """
    splits = ordered_splits(stats.rows)
    written = []
    for distribution in stats.distributions:
        name = plot_name(stats.name, distribution.column)
        shown = distribution.top(PLOT_ROWS)
        subtitle = f"configuration {stats.name}" if not dataset else f"{dataset}, configuration {stats.name}"
        subtitle += f": {stats.total:,} rows, {len(distribution.values):,} distinct values"
        if len(shown) < len(distribution.values):
            subtitle += f" ({PLOT_ROWS} shown)"
        bar_chart(
            Path(folder) / name, plot_title(distribution.column, distribution is stats.answers), shown, splits,
            subtitle=subtitle, value_label=distribution.column, count_label="rows",
        )
        written.append(name)
    return written


def statistics_section(configs: Sequence[str], stats: Mapping[str, ConfigStats], plots: Mapping[str, list[str]]) -> str:
    """Per configuration: the answer and group distributions as tables and plots.

    Example:
        >>> statistics_section(["x"], {}, {})
        '### `x`\\n\\nNo data files of this configuration are in the exported folder.'
    """
    parts = []
    for name in configs:
        parts.append(f"### `{name}`")
        if name not in stats:
            parts.append("No data files of this configuration are in the exported folder.")
            continue
        config = stats[name]
        splits = ordered_splits(config.rows)
        parts.append(", ".join(f"{split}: {config.rows[split]:,} rows" for split in splits) + f" (total {config.total:,}).")
        for distribution in config.distributions:
            title = f"`{distribution.column}`"
            if distribution is config.answers:
                title = f"Answers ({title})"
            parts.append(f"**{title}**: {len(distribution.values):,} distinct values")
            image = plot_name(name, distribution.column)
            if image in plots.get(name, []):
                parts.append(f"![{name}: {distribution.column} distribution]({image})")
            parts.append(_distribution_table(distribution, splits, TABLE_ROWS))
    return "\n\n".join(parts)


@dataclass(frozen=True)
class CardUsage:
    """What the Usage section's generated code needs to know about the export.

    ``media_config`` / ``key``: ``--media shared``'s media configuration and join column (else None);
    ``undecoded``: the column read with ``Audio(decode=False)`` (no torch), or None.
    """

    config: str
    media_config: str | None = None
    key: str | None = None
    undecoded: str | None = None


def usage_load(usage: CardUsage) -> str:
    """The Python lines that load ``usage.config`` as ``ds`` (a DatasetDict), media included.

    Example:
        >>> print(usage_load(CardUsage("general")))
        from datasets import load_dataset
        <BLANKLINE>
        ds = load_dataset("REPO_ID", "general")  # or the path of a local export folder
    """
    imports = ["load_dataset"] + (["Audio"] if usage.undecoded else []) + (["DatasetDict"] if usage.media_config else [])
    lines = [f"from datasets import {', '.join(sorted(imports))}", ""]
    cast = f'.cast_column("{usage.undecoded}", Audio(decode=False))' if usage.undecoded else ""
    undecoded_note = '  # {"bytes", "path"}: no torch needed' if usage.undecoded else ""
    if usage.media_config is None:
        lines.append(f'ds = load_dataset("REPO_ID", "{usage.config}")  # or the path of a local export folder')
        if cast:
            lines.append(f"ds = ds{cast}{undecoded_note}")
        return "\n".join(lines)
    key = usage.key
    lines += [
        f'# This export stores each media file once, in "{usage.media_config}": join it to the questions.',
        f'questions = load_dataset("REPO_ID", "{usage.config}")  # or the path of a local export folder',
        f'media = load_dataset("REPO_ID", "{usage.media_config}"){cast}{undecoded_note}',
        "",
        "",
        "def with_media(questions, media):",
        f'    row_of = {{name: i for i, name in enumerate(media["{key}"])}}',
        "",
        "    def add_media(batch):",
        f'        if "{key}" not in batch:  # a filter or map with input_columns= reads no media',
        "            return batch",
        f'        rows = media[[row_of[name] for name in batch["{key}"]]]',
        f'        return {{**batch, **{{c: rows[c] for c in rows if c != "{key}"}}}}',
        "",
        "    return questions.with_transform(add_media)  # media read only when a row is read",
        "",
        "",
        "ds = DatasetDict({split: with_media(questions[split], media[split]) for split in questions})",
    ]
    return "\n".join(lines)


def install_hint() -> str:
    """How this package is installed: from a clone of its repository (it is not on a package index).

    Example:
        >>> install_hint().startswith("pip install")
        True
    """
    return (f"pip install ./{DISTRIBUTION}  # a clone of the {DISTRIBUTION} repository "
            "(not on a package index yet)")


def keep_exported_parts(body: str, configs: Iterable[str]) -> str:
    r"""The body without its ``<!-- if-exported: NAMES -->`` parts none of whose configurations is exported,
    and without its ``<!-- unless-exported: NAMES -->`` parts one of whose configurations is.

    Example:
        >>> text = "A\n<!-- if-exported: questions -->\nQ\n<!-- /if-exported -->\nB"
        >>> keep_exported_parts(text, ["questions"]), keep_exported_parts(text, ["all"])
        ('A\nQ\nB', 'A\nB')
        >>> keep_exported_parts("<!-- unless-exported: questions -->\nN\n<!-- /unless-exported -->\n", ["all"])
        'N\n'
    """
    present = set(configs)

    def kept(match: re.Match) -> str:
        exported = bool(present & set(match["names"].split(",")))
        return match["body"] if exported == (match["kind"] == "if") else ""

    return _CONDITIONAL.sub(kept, body)


def render_card(
    template: CardTemplate,
    card_data: DatasetCardData,
    configs: Sequence[str],
    stats: Mapping[str, ConfigStats],
    descriptions: Mapping[str, str],
    plots: Mapping[str, list[str]],
    default_config: str | None,
    generator: str,
    usage: CardUsage | None = None,
    data_source: str = "",
) -> DatasetCard:
    """Fill the template's body and put ``card_data`` on top; ``if-exported`` parts follow ``stats``.

    Example::

        card = render_card(t, data, ["general"], stats, {}, {}, "general", "builder_utils.hub")
    """
    usage = usage or CardUsage(default_config or "")
    values = {
        "configs_table": configs_table(configs, stats, descriptions, default_config),
        "features_table": features_table(stats),
        "statistics": statistics_section(configs, stats, plots),
        "total_rows": f"{sum(s.total for s in stats.values()):,}",
        "default_config": default_config or "",
        "generator": generator,
        "usage_load": usage_load(usage),
        "usage_config": usage.config,
        "data_source": data_source or "rows made by this package outside a builder (see the configurations below).",
        "install": install_hint(),
    }
    body = keep_exported_parts(template.body, stats)
    body = _PLACEHOLDER.sub(lambda m: values[m.group(1)], body)
    return DatasetCard(f"---\n{card_data.to_yaml()}\n---\n{body}")
