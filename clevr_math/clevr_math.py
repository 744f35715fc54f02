"""CLEVR-Math: arithmetic word problems about CLEVR scenes, as a ``datasets`` builder (clevr_math/README.md).

It doubles as the ``datasets`` < 4 loading script, so it imports only installed packages, absolutely
(a loading script is copied alone into a modules cache, where relative imports break).
"""

import collections
import functools
import logging
import os
import re

import datasets

from builder_utils.builder import CheckedConfigBuilder, ConfigError, list_of
from builder_utils.checksums import download
from builder_utils.media_check import check_zip
from builder_utils.clevr import load_scenes
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator, balancing_windows
from builder_utils.clevr.options import GeneratorOptions
from builder_utils.options import generator_settings
from builder_utils.clevr.changes import change_question
from builder_utils.clevr.steps import check_steps, steps_json
from builder_utils.clevr.synth.insert import add_steps, studio_camera, world_png
from builder_utils.clevr.synth.world_record import read_info
from builder_utils.clevr.templates import SHIPPED_TEMPLATE_SETS
from clevr_math.clevr_folder import (
    CLEVR_ZIP,
    DATA_OPTIONS,
    ClevrDataError,
    SplitSource,
    check_images,
    clevr_root,
    find_splits,
    image_path,
    separate_test_split,
)
from clevr_math.config import BUILDER_CONFIGS, DEFAULT_CONFIG_NAME, VERSION, ClevrMathConfig
from clevr_math.released import load_released_questions, released_file, released_row
from clevr_math.template_selection import category_names, in_split, longest_chain, selected_templates, template_set

logger = logging.getLogger(__name__)

_DESCRIPTION = """\
CLEVR-Math: addition, subtraction, counting backwards, adversarial and multi-hop word problems
about CLEVR scenes, each with its image, integer answer, functional program and chain of thought.
Questions are regenerated from the CLEVR scene graphs by an open template engine, with the defects
of the original release fixed (attribute slots bound by type, no "subtract 0" questions, real
constraints, a question id and the category of every question).
"""

_CITATION = """\
@inproceedings{lindstrom2022clevrmath,
  title     = {{CLEVR-Math}: A Dataset for Compositional Language, Visual and Mathematical Reasoning},
  author    = {Dahlgren Lindstr{\\"o}m, Adam and Abraham, Savitha Sam},
  booktitle = {International Joint Conference on Learning and Reasoning (IJCLR)},
  year      = {2022},
  eprint    = {2208.05358},
  archivePrefix = {arXiv}
}
@inproceedings{johnson2017clevr,
  title     = {{CLEVR}: A Diagnostic Dataset for Compositional Language and Elementary Visual Reasoning},
  author    = {Johnson, Justin and Hariharan, Bharath and van der Maaten, Laurens and Fei-Fei, Li
               and Zitnick, C. Lawrence and Girshick, Ross},
  booktitle = {CVPR},
  year      = {2017}
}
"""

_HOMEPAGE = "https://arxiv.org/abs/2208.05358"
_LICENSE = "CC BY 4.0 (CLEVR images and scenes)"


#: How a card names the renderer a synthetic world's scene files record (``info.renderer``).
_RENDERED_BY = {
    "pillow": "drawn by this package's Pillow renderer in a stylised look: flat-shaded solids, soft blob "
              "shadows, highlights instead of reflections, not CLEVR's path-traced images",
    "blender": "path-traced by Blender's Cycles in a CLEVR-like studio (`--renderer blender`)",
}


class ClevrMath(CheckedConfigBuilder, datasets.GeneratorBasedBuilder):
    """CLEVR-Math, regenerated from CLEVR scenes (configs ``general``, ``multihop``, ``chains``).

    ``num_proc`` shares out shards of ``reset_counts_every`` scenes (the balancing window): same rows for any number.

    Example:
        >>> ClevrMath(config_name="general", data_dir="CLEVR_v1.0", sed=1)
        Traceback (most recent call last):
        ...
        builder_utils.builder.ConfigError: unknown CLEVR-Math config option(s) sed; valid: add_post_prompt, ...
    """

    DATASET_NAME = "CLEVR-Math"
    VERSION = VERSION
    BUILDER_CONFIG_CLASS = ClevrMathConfig
    BUILDER_CONFIGS = BUILDER_CONFIGS
    DEFAULT_CONFIG_NAME = DEFAULT_CONFIG_NAME
    #: What the Hub card describes (builder_utils.hub.stats): the answer, then the columns
    #: users filter on (category; template, whose values are the card's keys).
    CARD_ANSWER_COLUMNS = ("label",)
    CARD_GROUP_COLUMNS = ("category", "template")
    # Rows are small (the image is a path in the Arrow cache); big batches write faster.
    DEFAULT_WRITER_BATCH_SIZE = 10000
    # Read by builder_utils.hub (--media shared, the conversations configuration).
    HUB_LAYOUT = {
        "media_column": "image",
        "key": "image_filename",
        "media_config": "images",
        "conversations_from": "general",
        "conversation_media": "images",
        "turn": {"user": "question", "assistant": "label"},
        "turn_fields": ["question_id", "category", "template", "template_index"],
        # `reasoning_messages`: <think>{cot}</think><answer>{label}</answer> turns (SFT before GRPO).
        "reasoning": "cot",
        # Single-hop questions in train, multihop in test: conversations_multihop, prompts_multihop.
        "also_follow": ["multihop"],
        "data_source": "clevr_math",  # the_cauldron's turn `source`, verl's `data_source`
        "rewards": "clevr_math.rewards",  # accuracy_reward, format_reward (TRL), compute_score (verl)
        # render_steps' images, drawn per question: inline only (a shared export keeps `steps`, which redraws them)
        "drawn_media": ["step_images"],
        # builder_utils.prompts: the `prompts` rows (RL) and the stream's rows.
        "prompts": {
            "media_kind": "image",
            "answer": "label",
            "columns": ["label", "category", "template", "num_operations", "question_id", "image_filename"],
            # render_steps: the rows' images are every world of the problem, in order
            "media_sequence": "step_images",
        },
        # The trainer layouts' `difficulty` (operations, objects, answer size), for curricula and samplers.
        "difficulty": {"function": "clevr_math.difficulty:row_difficulty",
                       "columns": ["num_operations", "num_objects", "label"],
                       "features": {"operations": "int32", "objects": "int32", "answer": "int64"}},
    }

    def checked_config(self, builder_config: ClevrMathConfig) -> None:
        for split in ("train", "test"):  # bad selections fail here, not deep in a worker
            selected_templates(builder_config, split)
        longest = longest_chain(builder_config)
        if builder_config.max_operations is not None and builder_config.max_operations > longest:
            # max_operations only filters a template set; it cannot make longer chains.
            logger.warning(
                "CLEVR-Math config %r: max_operations=%d, but the longest template of %s has %d "
                "operations; write longer chains with `python -m builder_utils.clevr.chain_templates "
                "--max-operations %d --output-dir DIR` and pass template_set=DIR",
                builder_config.name, builder_config.max_operations, builder_config.template_set, longest,
                builder_config.max_operations,
            )

    def data_source(self) -> str:
        """One sentence for the card: what this build's scenes and questions come from.

        ``clevr-math synth`` writes ``"date": "synthetic"`` in a scene file's ``info`` (CLEVR's: a date).

        Example:
            >>> ClevrMath(config_name="general").data_source().startswith("Scenes and images are CLEVR v1.0")
            True
        """
        synthetic = False
        renderers = set()
        rules: dict[str, str] = {}  # split -> the shape-colour rule its scene file records
        files = []
        if self.config.data_dir:
            root = clevr_root(os.path.abspath(os.path.expanduser(self.config.data_dir)))
            files += [(split, os.path.join(root, "scenes", f"CLEVR_{split}_scenes.json")) for split in ("train", "val", "test")]
        if self.config.test_data_dir:
            root = clevr_root(os.path.abspath(os.path.expanduser(self.config.test_data_dir)))
            files.append(("test", os.path.join(root, "scenes", "CLEVR_test_scenes.json")))
        for split, path in files:
            if os.path.isfile(path):
                with open(path, "rb") as handle:
                    head = handle.read(4096)
                synthetic = synthetic or re.search(rb'"date":\s*"synthetic"', head) is not None
                # the info block names the renderer of the images (worlds before it did: Pillow)
                named = re.search(rb'"renderer":\s*"([A-Za-z0-9_.-]{1,40})"', head)
                renderers.add(named.group(1).decode() if named else "pillow")
                rule = (read_info(path) or {}).get("shape_color_rule")
                if isinstance(rule, dict) and isinstance(rule.get("name"), str):
                    rules[split] = rule["name"][:80]
        if synthetic:
            drawn = "; ".join(_RENDERED_BY.get(name, f"rendered by the `{name}` renderer") for name in sorted(renderers))
            scenes = ("Scenes and images come from a synthetic CLEVR-style world written by `clevr-math synth`, "
                      f"not from CLEVR v1.0: scene graphs drawn from a seed, images {drawn}. Use it to try the "
                      "pipeline, not to report results.")
        else:
            scenes = ("Scenes and images are CLEVR v1.0 (train and validation scenes for the train and validation "
                      "splits; the test split uses newly rendered scenes when they are given).")
        if self.config.test_data_dir:
            scenes += (" The test split's scenes and images come from a folder of their own (`test_data_dir`), "
                       "rendered apart from the train and validation scenes.")
        if rules:
            scenes += " Shape-colour rule of the scenes: " + "; ".join(
                f"{split}: {name}" for split, name in sorted(rules.items()))  + " (each shape takes only the colours " \
                "the rule allows)."
        if self.config.released_questions_dir:
            return scenes + (" The questions and answers are those of the original CLEVR-Math release "
                             "(`released_questions_dir`), not regenerated.")
        return scenes + " The questions are generated by this package's template engine."

    def cache_inputs(self, config: ClevrMathConfig) -> dict:
        # Everything under builder_utils/clevr can change generated rows (executor, generator,
        # templates, synonyms), and so can this package's own modules (category mapping of
        # released files, template selection, row layout) even when the version stays the same.
        code = []
        if os.path.isdir(str(config.template_set)):
            code += sorted(
                os.path.join(config.template_set, f) for f in os.listdir(config.template_set) if f.endswith(".json")
            )
        inputs = []
        if config.data_dir:
            root = clevr_root(config.data_dir)
            inputs += [os.path.join(root, "scenes", f"CLEVR_{s}_scenes.json") for s in ("train", "val", "test")]
        if config.test_data_dir:
            inputs.append(os.path.join(clevr_root(config.test_data_dir), "scenes", "CLEVR_test_scenes.json"))
        if config.released_questions_dir:
            inputs += [released_file(config.released_questions_dir, s) for s in ("train", "val", "test")]
        # scene and released question files are small enough to key by content (a file edited
        # with its size and modification time kept must not be served from the cache)
        return {"packages": ["builder_utils.clevr", "clevr_math"], "code_files": code, "content_files": inputs}

    def _info(self):
        features = question_features(category_names(self.config), steps=_with_steps(self.config),
                                     step_images=self.config.render_steps)
        return datasets.DatasetInfo(
            description=_DESCRIPTION,
            features=features,
            homepage=_HOMEPAGE,
            license=_LICENSE,
            citation=_CITATION,
        )

    # -- data -------------------------------------------------------------------------------

    def _data_root(self, dl_manager) -> str:
        if self.config.data_dir:
            return clevr_root(os.path.abspath(os.path.expanduser(self.config.data_dir)))
        # The recorded size and sha256 are checked: a 19 GB download cut short or altered fails here.
        archive = download(dl_manager, CLEVR_ZIP.url, CLEVR_ZIP, "CLEVR-Math", DATA_OPTIONS)
        check_zip(archive)  # verified by its sha256 already; the same rule as every zip we extract
        return clevr_root(dl_manager.extract(archive))

    def _split_generators(self, dl_manager):
        sources = self._sources(dl_manager)
        if self.config.released_questions_dir:
            return [self._released_split(source) for source in sources]
        return [self._generated_split(source) for source in sources]

    def _sources(self, dl_manager) -> list[SplitSource]:
        """The splits of ``data_dir`` (or CLEVR v1.0), the test split from ``test_data_dir`` when given."""
        if self.config.test_data_dir and self.config.released_questions_dir:
            raise ConfigError(f"CLEVR-Math config {self.config.name!r}: test_data_dir regenerates questions; the "
                              "released questions name their own test images (drop one of the two)")
        if self.config.holdout_category and not self.config.released_questions_dir and not self.config.test_data_dir:
            # before any download: CLEVR v1.0's archive has no test scenes
            given = self.config.data_dir and os.path.isfile(os.path.join(
                clevr_root(os.path.abspath(os.path.expanduser(self.config.data_dir))), "scenes", "CLEVR_test_scenes.json"))
            if not given:
                self._refuse_without_test()
        sources = find_splits(self._data_root(dl_manager))
        if self.config.test_data_dir:
            if any(s.clevr_split == "test" for s in sources):
                raise ConfigError(f"CLEVR-Math config {self.config.name!r}: data_dir has a test split already and "
                                  f"test_data_dir {self.config.test_data_dir} gives another: keep one")
            sources.append(separate_test_split(self.config.test_data_dir))
        if self.config.holdout_category and not self.config.released_questions_dir and not any(
                s.clevr_split == "test" for s in sources):
            self._refuse_without_test()
        return sources

    def _refuse_without_test(self) -> None:
        # a held-out category lives only in test: without test scenes the config would have none of it
        raise ConfigError(
            f"CLEVR-Math config {self.config.name!r} holds its {self.config.holdout_category} questions out for "
            "the test split, and the data has no test scenes (CLEVR v1.0 released none). Give test_data_dir="
            "DIR (write it with `clevr-math synth --out DIR --num_scenes test=1000`, --renderer blender for "
            "CLEVR's look), or add scenes/CLEVR_test_scenes.json and images/test/ to data_dir, or build "
            "--config general")

    def _prepare_split(self, split_generator, **kwargs):
        num_proc = kwargs.get("num_proc") or 1
        windows = split_generator.gen_kwargs.get("windows")
        if num_proc > 1 and windows is not None and len(windows) < num_proc:
            # datasets then lowers num_proc with a bare "only contains N shard(s)"; say why.
            logger.warning(
                "CLEVR-Math %s split: num_proc=%d, but its %d scenes make %d shard(s) of reset_counts_every=%d "
                "scenes (one per balancing window), so it builds in %d process(es); lower reset_counts_every "
                "to spread it over more (the rows change with it)",
                split_generator.name, num_proc, len(split_generator.gen_kwargs["scenes"]), len(windows),
                self.config.reset_counts_every, len(windows),
            )
        return super()._prepare_split(split_generator, **kwargs)

    def _generated_split(self, source: SplitSource) -> datasets.SplitGenerator:
        scenes = load_scenes(source.scenes_path)
        check_images(source, scenes)
        windows = balancing_windows(len(scenes), self.config.reset_counts_every)
        # One list entry per balancing window: `num_proc` hands contiguous runs of windows to
        # the workers, and the generator restarts its balancing counts on window boundaries,
        # so any number of workers yields exactly the rows of one.
        return datasets.SplitGenerator(
            name=source.hf_split,
            gen_kwargs={
                "source": source,
                "scenes": scenes,
                "windows": list(windows),
                "options": self._generator_options(source),
            },
        )

    def _generator_options(self, source: SplitSource) -> GeneratorOptions:
        config = self.config
        every = set(t.key for t in template_set(config).templates)
        keys = [t.key for t in selected_templates(config, source.clevr_split)]
        # Generating only the wanted templates (rather than filtering afterwards) lets every
        # test image get its held-out question and spends the train budget on the others.
        question_types = None if set(keys) == every else keys
        shipped = config.template_set in SHIPPED_TEMPLATE_SETS
        return GeneratorOptions(**{
            **generator_settings(config, GeneratorOptions),
            "templates": config.template_set if shipped else "clevr_math",
            "template_dir": None if shipped else config.template_set,
            "question_types": question_types,
        })

    def _released_split(self, source: SplitSource) -> datasets.SplitGenerator:
        path = released_file(self.config.released_questions_dir, source.clevr_split)
        if not os.path.isfile(path):
            raise ClevrDataError(f"{path}: released question file not found (the {source.hf_split} split needs it)")
        # Checked in full here so that a bad question or a missing image is reported directly,
        # not wrapped in a generation error; one shard per split (the file is one JSON document).
        names = [
            released_row(question, f"{path}: question {position}")["image_filename"]
            for position, question in enumerate(load_released_questions(path))
        ]
        check_images(source, [{"image_filename": name} for name in names], origin=path, item="question")
        return datasets.SplitGenerator(
            name=source.hf_split,
            gen_kwargs={"source": source, "released_path": path},
        )

    # -- rows -------------------------------------------------------------------------------

    def _generate_examples(self, source, scenes=None, windows=None, options=None, released_path=None):
        if released_path is not None:
            yield from self._released_examples(source, released_path)
            return
        # Step worlds: a question whose insertion cannot be placed is replaced by another.
        add = functools.partial(add_steps, seed=self.config.seed) if _with_steps(self.config) else None
        generator = QuestionGenerator(options, on_question=add)
        per_image = collections.Counter()
        checked_image = None
        objects = {scene.get("image_index", position): len(scene.get("objects", ()))
                   for position, scene in enumerate(scenes)}
        for start, stop in windows:
            for question in generator.generate(scenes, start=start, stop=stop):
                question["num_objects"] = objects.get(question["image_index"])
                filename = question["image_filename"]
                if filename != checked_image:
                    where = f"{source.scenes_path}: scene {question['image_index']} ({filename})"
                    path = image_path(source, filename, where)
                    checked_image = filename
                yield from self._question_rows(source, question, path, per_image, scenes)

    def _question_rows(self, source: SplitSource, question: dict, path: str, per_image: collections.Counter, scenes):
        """The rows of one generated question: itself, and/or the question over its change (``changes``)."""
        config = self.config
        scene = _scene_of(scenes, question) if "steps" in question else None
        if scene is not None:  # each step's count, the answer on the last, kept objects unchanged
            check_steps(scene, question["program"], question["category"], question["steps"],
                        question["intermediate_counts"], question["answer"])
        asked = [question] if config.changes != "only" else []
        if config.changes:
            asked.append(change_question(question, scene, seed=config.seed))
        for item in asked:
            if not in_split(item["category"], config.holdout_category, source.clevr_split):
                continue
            key, row = self._row(source, item, path, per_image)
            if "steps" in item:
                row["steps"] = steps_json(item["steps"])
            if config.render_steps:
                worlds = _step_images(scene, item["steps"])
                row["step_images"] = worlds[1:] if item.get("shows") == "after" else worlds
            yield key, row

    def _row(self, source: SplitSource, question: dict, path: str, per_image: collections.Counter):
        image_index = question["image_index"]
        k = per_image[image_index]
        per_image[image_index] += 1
        question_id = f"{source.clevr_split}_{image_index:06d}_{k}"
        return question_id, question_row(question, question_id, path)

    def _released_examples(self, source: SplitSource, path: str):
        per_image = collections.Counter()
        for position, question in enumerate(load_released_questions(path)):
            where = f"{path}: question {position}"
            row = released_row(question, where)
            if not in_split(row["category"], self.config.holdout_category, source.clevr_split):
                continue
            if row["image_index"] is None:
                row["image_index"] = _index_from_filename(row["image_filename"], where)
            image = image_path(source, row["image_filename"], where)
            key, example = self._row(
                source,
                {**row, "template_filename": row["template"], "answer": row["label"]},
                image,
                per_image,
            )
            yield key, example


def question_features(categories: list[str], *, steps: bool = False, step_images: bool = False) -> datasets.Features:
    """The features of a CLEVR-Math question row (``category`` a ClassLabel of ``categories``);
    ``steps``: the step scene graphs as JSON text, ``step_images``: every world of the problem.

    Example:
        >>> question_features(["remove_group"])["category"].names
        ['remove_group']
        >>> list(question_features(["remove_group"], steps=True, step_images=True))[-2:]
        ['steps', 'step_images']
    """
    program_node = {
        "function": datasets.Value("string"),
        "inputs": list_of(datasets.Value("int32")),
        "value_inputs": list_of(datasets.Value("string")),
    }
    return datasets.Features(
        {
            "template": datasets.Value("string"),
            "id": datasets.Value("string"),
            "question": datasets.Value("string"),
            "image": datasets.Image(),
            "label": datasets.Value("int64"),
            "question_id": datasets.Value("string"),
            "image_filename": datasets.Value("string"),
            "category": datasets.ClassLabel(names=categories),
            "question_family_index": datasets.Value("int32"),
            "template_index": datasets.Value("int32"),
            "program": list_of(program_node),
            "cot": datasets.Value("string"),
            "num_operations": datasets.Value("int32"),
            # The count after each operation, in order (what a chain's reasoning passes through).
            "intermediate_counts": list_of(datasets.Value("int32")),
            # The scene's objects (None without its scene graph: released questions): a difficulty.
            "num_objects": datasets.Value("int32"),
            # The scene graph after each operation (CLEVR's scene format), as the stream's `scene` column.
            **({"steps": datasets.Value("string")} if steps or step_images else {}),
            **({"step_images": list_of(datasets.Image())} if step_images else {}),
        }
    )


def question_row(question: dict, question_id: str, image) -> dict:
    """The row of one generated (or released) question, for the builder and :func:`clevr_math.stream`.

    Example:
        >>> q = {"template_filename": "addition", "image_filename": "a.png", "question": "Add 1 cube. How many?",
        ...      "answer": "3", "category": "insertion", "question_family_index": 0, "template_index": 0,
        ...      "program": [], "cot": None, "num_operations": 1, "intermediate_counts": [3]}
        >>> question_row(q, "val_000000_0", "a.png")["label"]
        3
    """
    return {
        "template": question["template_filename"],
        "id": question["image_filename"],
        "question": question["question"],
        "image": image,
        "label": int(question["answer"]),
        "question_id": question_id,
        "image_filename": question["image_filename"],
        "category": question["category"],
        "question_family_index": question["question_family_index"],
        "template_index": question["template_index"],
        "program": [
            {"function": n["function"], "inputs": list(n["inputs"]), "value_inputs": list(n["value_inputs"])}
            for n in question["program"]
        ],
        "cot": question.get("cot"),
        "num_operations": question["num_operations"],
        "intermediate_counts": question.get("intermediate_counts"),
        "num_objects": question.get("num_objects"),
    }


def _with_steps(config) -> bool:
    """Whether a configuration's rows carry step scene graphs (``render_steps`` draws them, so needs them)."""
    return bool(config.step_scenes or config.render_steps) and not config.released_questions_dir


def _scene_of(scenes, question: dict) -> dict:
    """The scene a generated question was asked about: at its ``image_index`` in CLEVR's files, else searched."""
    index = question["image_index"]
    if 0 <= index < len(scenes) and scenes[index].get("image_filename") == question["image_filename"]:
        return scenes[index]
    for scene in scenes:
        if scene.get("image_filename") == question["image_filename"]:
            return scene
    raise ClevrDataError(f"no scene for {question['image_filename']}")


def _step_images(scene: dict, steps: list) -> list[dict]:
    """Every world of one problem as PNG bytes (the first too, so that all are drawn alike)."""
    camera = studio_camera(scene)
    return [{"bytes": world_png(world, camera), "path": None} for world in (scene, *steps)]


def _index_from_filename(image_filename: str, where: str) -> int:
    """``CLEVR_val_000042.png`` -> 42, for question files that omit ``image_index``."""
    digits = os.path.splitext(image_filename)[0].rsplit("_", 1)[-1]
    if not digits.isdigit():
        raise ClevrDataError(f"{where}: no image_index and none in the file name {image_filename!r}")
    return int(digits)
