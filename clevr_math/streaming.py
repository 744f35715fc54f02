"""CLEVR-Math as a stream of fresh, verified problems: :func:`stream` (README, "A stream of fresh problems").

Every guarantee follows from the layout (README, "Determinism and resume"): a block of :data:`SCENES_PER_BLOCK`
scenes draws from a seed of (seed, split, block), balancing restarted: the same whoever computes it.

>>> ds = stream(seed=0, num_questions=3, num_shards=1)
>>> [row["answer"] == str(row["label"]) for row in ds]
[True, True, True]
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import glob
import hashlib
import io
import json
import logging
import os
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import islice
from typing import Any

import datasets

from builder_utils.builder import list_of
from builder_utils.options import MAX_SEED, Choice, FilePath, Instance, Integer
from builder_utils.clevr import SceneIndex, answer, load_scenes
from builder_utils.clevr.executor import CompiledProgram, compile_program
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.steps import check_steps, steps_json
from builder_utils.clevr.synth.insert import add_steps, studio_camera, world_png
from builder_utils.clevr.synth.render import render_scene
from builder_utils.clevr.synth.scenes import SPLITS as SYNTHETIC_SPLITS
from builder_utils.clevr.synth.scenes import generate_scene
from builder_utils.clevr.synth.vocabulary import load_vocabulary
from builder_utils.datasets_adapter import StatefulExamples, merge_gen_kwargs, split_gen_kwargs
from builder_utils.prompts import DEFAULT_PROMPT_STYLE, prompt_features, prompt_row, prompt_style, with_media_count
from clevr_math.clevr_folder import ClevrDataError, SplitSource, clevr_root, image_path, split_source
from clevr_math.clevr_math import ClevrMath, question_features, question_row
from clevr_math.categories import CATEGORIES
from clevr_math.difficulty import Curriculum, Difficulty, difficulty_fields

__all__ = ["NUM_SHARDS", "SCENES_PER_BLOCK", "StreamError", "evaluation_keys", "stream", "stream_features"]

logger = logging.getLogger(__name__)

#: Shards of a stream: a multiple of 1, 2, 3, 4, 6, 8, 12, 16, 24 and 48, so that common numbers
#: of ranks times DataLoader workers split it by whole shards.
NUM_SHARDS = 48
#: Scenes per block: the unit of answer balancing and of the work a resume repeats.
SCENES_PER_BLOCK = 16
#: Problems asked per scene (templates instantiated per image).
QUESTIONS_PER_IMAGE = 4
#: Consecutive scenes without any problem before a stream gives up on a difficulty (bounded work
#: when the difficulty cannot be met, e.g. 8 removals in worlds of 4 objects).
MAX_BARREN_SCENES = 2000
#: The maxima of the stream's sizes. Shards: one list entry per shard is made at once (10**8 took
#: gigabytes); 4,096 is 64 ranks of 64 DataLoader workers. Problems per scene: a scene's templates
#: are tried for each (the paper's set has 13). Problems: more than any training run reads; an
#: export writes each to disk, 10**8 rows being hundreds of gigabytes.
MAX_SHARDS = 4096
MAX_QUESTIONS_PER_IMAGE = 1000
MAX_STREAM_QUESTIONS = 10**15
MAX_STREAM_EXPORT = 10**8
#: The folder split names (Hugging Face) and their CLEVR names; synthetic worlds know the CLEVR ones.
_CLEVR_SPLIT = {"train": "train", "validation": "val", "val": "val", "test": "test"}

#: The data options of stream() and problems(), ending their "not found" errors (the builder's mention a download).
_STREAM_DATA_OPTIONS = ("Options: data_dir=<a CLEVR_v1.0 folder; a stream reads only its split's "
                        "scenes/CLEVR_{split}_scenes.json and images/{split}/>, or no data_dir for synthetic worlds "
                        "made on the fly (`clevr-math synth --out DIR --splits {split}` writes such a folder).")


class StreamError(ValueError):
    """A stream that cannot be made or continued; the message names the option or the file."""


@dataclasses.dataclass(frozen=True)
class _Source:
    """Where a stream's scenes come from: a folder's split, or synthetic worlds (``folder`` None)."""

    split: str
    folder: SplitSource | None = None


@dataclasses.dataclass
class _Spec:
    """Everything that decides a stream's problems (shared by its shards, pickled to workers)."""

    source: _Source
    split: str  # as asked (Hugging Face names): the rows' extra_info.split
    seed: int
    curriculum: Curriculum
    num_shards: int
    questions_per_image: int
    style: str
    exclude: frozenset = frozenset()
    step_scenes: bool = False  # each row's `steps`: the scene graph after each operation
    render_steps: bool = False  # each row's images: every world of the problem, drawn by Pillow
    combos: tuple | None = None  # the shape-colour rule of every scene (cogent=), as WorldRules.combos


def _hash_int(*parts: Any) -> int:
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1  # a non-negative int64


@lru_cache(maxsize=64)
def _prototype(template_set: str, question_types: tuple[str, ...] | None, max_answer: int,
               questions_per_image: int) -> QuestionGenerator:
    # Templates are loaded and compiled once per process; each shard copies it (its own seed
    # and balancing counts, see _Lane._questions).
    return QuestionGenerator(GeneratorOptions(
        templates=template_set, question_types=question_types, templates_per_image=questions_per_image,
        reset_counts_every=0, max_answer=max_answer, bound_intermediate_counts=True))


def _colour_of_shape(seed: int) -> dict[str, str]:
    """The confounder of a training stream: each shape's one colour, drawn from the seed."""
    vocab = load_vocabulary()
    colours = random.Random(_hash_int("confounder", seed)).sample(vocab.colors, len(vocab.shapes))
    return dict(zip(vocab.shapes, colours))


def image_key(question: str, image_bytes: bytes) -> tuple[str, str]:
    """What makes two problems identical: the question text and the image's bytes (sha256).

    >>> image_key("How many?", b"png")[1][:8]
    '8f8cbb7d'
    """
    return question, hashlib.sha256(image_bytes).hexdigest()


def evaluation_keys(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> frozenset:
    """The :func:`image_key` of every question of an evaluation export (Parquet files, or folders of
    them, images embedded): a stream given them (``exclude=``) never yields one of these problems.

    Example::

        stream(exclude="hub/clevr_math/general")       # every split's shards under the folder
    """
    import pyarrow.parquet as pq

    files: list[str] = []
    for path in [paths] if isinstance(paths, (str, os.PathLike)) else list(paths):
        path = os.fspath(path)
        if os.path.isdir(path):
            files += sorted(glob.glob(os.path.join(path, "**", "*.parquet"), recursive=True))
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise StreamError(f"{path}: exclude names no Parquet file or folder")
    keys = set()
    for path in files:
        names = pq.read_schema(path).names
        media = "image" if "image" in names else "images" if "images" in names else None
        if "question" not in names or media is None:
            raise StreamError(f"{path}: an evaluation export to exclude needs a question column and embedded "
                              f"images (image or images); it has {', '.join(names)}")
        table = pq.read_table(path, columns=["question", media])
        for position, (question, image) in enumerate(zip(table.column("question").to_pylist(),
                                                         table.column(media).to_pylist())):
            image = image[0] if media == "images" and image else image
            if not image or image.get("bytes") is None:
                raise StreamError(f"{path}: row {position} has no embedded image bytes (a --media shared export? "
                                  "exclude needs the inline layout)")
            keys.add(image_key(question, image["bytes"]))
    return frozenset(keys)


def stream_features() -> datasets.Features:
    """The features of a stream's rows: the ``prompts`` configuration's, then four more.

    >>> list(stream_features())[-5:]
    ['question', 'program', 'cot', 'scene', 'steps']
    """
    source = question_features(list(CATEGORIES))
    spec = _prompt_spec()
    features = prompt_features(source, spec)
    for name in ("question", "program", "cot"):
        features[name] = source[name]
    features["scene"] = datasets.Value("string")
    features["steps"] = datasets.Value("string")  # JSON text, None unless step_scenes
    return features


#: Compiled programs by program (:func:`_compiled`), oldest first; bounded.
_COMPILED: dict[tuple, CompiledProgram] = {}
_MAX_COMPILED = 1024


def _compiled(program: list[dict]) -> CompiledProgram:
    """The program compiled (checked), cached by its nodes: a stream asks the same programs again and
    again, and compiling costs more than running. About 5 KB an entry: the cache stays near 5 MB."""
    key = tuple([(node["function"], tuple(node["inputs"]), tuple(node["value_inputs"])) for node in program])
    compiled = _COMPILED.get(key)
    if compiled is None:
        if len(_COMPILED) >= _MAX_COMPILED:
            del _COMPILED[next(iter(_COMPILED))]  # the oldest entry
        compiled = _COMPILED[key] = compile_program(program)
    return compiled


@lru_cache(maxsize=8)
def _scene_file(path: str, mtime_ns: int):
    return load_scenes(path)


@lru_cache(maxsize=1)
def _prompt_spec():
    from builder_utils.hub.layout import layout_of

    return layout_of(ClevrMath).prompt_spec()


#: The scene as JSON text: sorted keys, as ``json.dumps(scene, sort_keys=True)`` writes it; one
#: encoder for all rows, without the circular-reference check (a scene graph is a tree): ~20 %
#: less time for the same text.
_SCENE_JSON = json.JSONEncoder(sort_keys=True, check_circular=False).encode
#: Stands for the question in the prompt pieces encoded once per style (no question holds a NUL).
_QUESTION = "\x00question\x00"


@lru_cache(maxsize=1)
def encoded_row_features() -> datasets.Features:
    """The features of the rows as the stream yields them, images not decoded: what
    ``stream(...).decode(False)`` asks for, so datasets iterates the stream's own rows as they are.

    >>> encoded_row_features()["images"].feature.decode
    False
    """
    features = stream_features()
    features["images"] = list_of(datasets.Image(decode=False))
    return features


@dataclasses.dataclass(frozen=True)
class _EncodedPieces:
    """What ``datasets``' encode-then-decode does to the row parts it reshapes, worked out once per
    prompt style by ``datasets`` itself (the encoder decides a list's shape from its first element:
    ``text: None`` joins the image placeholder only when the user turn comes first, as in ``plain``)."""

    prompts: Callable[[str], tuple]
    category: dict


@lru_cache(maxsize=8)
def _encoded_pieces(style: str) -> _EncodedPieces:
    features = encoded_row_features()
    spec = _prompt_spec()
    sample = {name: None for name in spec.source_columns()} | {spec.question: _QUESTION, spec.answer: 0}
    encoded = features.encode_example(prompt_row(sample, dataset=spec, style=style, split="", index=0))
    names = features["category"].names
    return _EncodedPieces(_literal_function((encoded["prompt"], encoded["verl_prompt"])),
                          {name: names.index(name) for name in names})


def _literal(piece) -> str:
    if type(piece) is dict:
        return "{" + "".join(f"{key!r}: {_literal(value)}, " for key, value in piece.items()) + "}"
    if type(piece) is list:
        return "[" + "".join(f"{_literal(value)}, " for value in piece) + "]"
    if type(piece) is tuple:
        return "(" + "".join(f"{_literal(value)}, " for value in piece) + ")"
    if type(piece) is str and _QUESTION in piece:
        return "(" + " + question + ".join(map(repr, piece.split(_QUESTION))) + ")"
    if piece is None or type(piece) in (str, int):
        return repr(piece)
    raise TypeError(f"no literal for a {type(piece).__name__} in a prompt piece")


def _literal_function(piece):
    """``question -> a fresh copy of piece`` as one compiled literal (our own strings, by ``repr``):
    about 7 times faster than walking the piece."""
    return eval(compile(f"lambda question: {_literal(piece)}", "<stream prompt piece>", "eval"), {})


class _StreamExamples(StatefulExamples):
    """``datasets``' generator iterable over gen_kwargs shards, its state also holding the block and
    the problems passed in it: a resume regenerates one block (the base class re-runs the shard).

    Its rows are already encoded-then-decoded for :func:`encoded_row_features`, and ``features`` says so:
    ``IterableDataset`` then yields them as they are (it adds a ``FormattedExamplesIterable`` only
    when features differ). ``is_typed`` stays False: under other features (decoded images,
    ``cast_column``, a format, ``map``) datasets 5.2 re-types every row as before, where a typed
    iterable would pass unchanged. A deep copy (``interleave_datasets``/``concatenate_datasets``
    take the first source's features for all) declares none: other sources' rows stay on datasets' path."""

    declared = True  # the features are declared (see __deepcopy__)

    @property
    def features(self) -> datasets.Features | None:
        return encoded_row_features() if self.declared else None

    def __deepcopy__(self, memo) -> "_StreamExamples":
        copied = self.__class__.__new__(self.__class__)
        memo[id(self)] = copied
        for name, value in vars(self).items():
            setattr(copied, name, copy.deepcopy(value, memo))
        copied.declared = False
        return copied

    def initial_state(self) -> dict:
        return {"shard_idx": 0, "shard_example_idx": 0, "block": 0, "block_example": 0, "levels": "",
                "type": self.__class__.__name__}

    def __iter__(self):
        state = self._state_dict
        first = state["shard_idx"] if state else 0
        for kwargs in islice(split_gen_kwargs(self.kwargs, max_num_jobs=self.num_shards), first, None):
            resume = (state["shard_example_idx"], state["block"], state["block_example"], state["levels"]) if state else None
            for (block, in_block, levels), key, example in self.generate_examples_fn(**kwargs, resume=resume):
                if state:
                    state["shard_example_idx"] += 1
                    state["block"], state["block_example"], state["levels"] = block, in_block, levels
                yield key, example
            if state:
                state.update(shard_idx=state["shard_idx"] + 1, shard_example_idx=0, block=0, block_example=0, levels="")

    def _like(self, kwargs: dict) -> "_StreamExamples":
        like = _StreamExamples(self.generate_examples_fn, kwargs)
        like.declared = self.declared
        return like

    def shuffle_data_sources(self, generator) -> "_StreamExamples":
        return self._like(self.kwargs)  # the shard order is part of the stream's definition

    def shard_data_sources(self, num_shards: int, index: int, contiguous=True) -> "_StreamExamples":
        kwargs_list = split_gen_kwargs(self.kwargs, max_num_jobs=self.num_shards)
        indices = self.split_shard_indices_by_worker(num_shards, index, contiguous=contiguous)
        return self._like(merge_gen_kwargs([kwargs_list[i] for i in indices]))

    def reshard_data_sources(self) -> "_StreamExamples":
        return self._like(self.kwargs)


class _Lane:
    """One shard's problems: its blocks in order, each scene's questions, their rows."""

    def __init__(self, shard: int, quota: int | None, spec: _Spec):
        self.shard, self.quota, self.spec = shard, quota, spec
        folder = spec.source.folder
        self.scenes = None if folder is None else _scene_file(folder.scenes_path, os.stat(folder.scenes_path).st_mtime_ns)
        self.colours = _colour_of_shape(spec.seed) if spec.source.split == "train" else None
        self.combos = None if spec.combos is None else {shape: colours for shape, colours in spec.combos}
        self.generators: dict[tuple, QuestionGenerator] = {}
        self.warned = False

    def block_scenes(self, block: int) -> list[tuple[int, int]]:
        """(pass over the folder, scene position) of the scenes of the shard's ``block``-th block."""
        number = block * self.spec.num_shards + self.shard
        if self.scenes is None:
            first = number * SCENES_PER_BLOCK
            return [(0, first + k) for k in range(SCENES_PER_BLOCK)]
        total = len(self.scenes)
        epoch, within = divmod(number, -(-total // SCENES_PER_BLOCK))
        start = within * SCENES_PER_BLOCK
        return [(epoch, p) for p in range(start, min(start + SCENES_PER_BLOCK, total))]

    def scene(self, position: int, difficulty: Difficulty) -> dict:
        if self.scenes is not None:
            return self.scenes[position]
        # one mechanism for both rules: the confounder is one colour per shape, CoGenT a set per shape
        rule = self.combos if self.combos is not None else self.colours if difficulty.confounder else None
        return generate_scene(self.spec.seed, self.spec.source.split, position, max_objects=difficulty.max_objects,
                              colour_of_shape=rule)

    def image(self, scene: dict, position: int) -> dict:
        if self.scenes is None:
            buffer = io.BytesIO()
            render_scene(scene, buffer)
            return {"bytes": buffer.getvalue(), "path": None}
        folder = self.spec.source.folder
        path = image_path(folder, scene["image_filename"], f"{folder.scenes_path}: scene {position}")
        with open(path, "rb") as handle:
            # The bytes, not the path: datasets would keep only a path that exists here, and a
            # row must stand alone (other machines, workers, exports).
            return {"bytes": handle.read(), "path": None}

    def problems(self, resume: tuple | None) -> Iterator[tuple[tuple, str, dict]]:
        """``(cursor, key, row)`` per problem; ``resume`` = ``(problems yielded by the shard,
        block, questions of that block passed, levels of its scenes so far)`` continues there."""
        curriculum = self.spec.curriculum
        yielded, block, skip, recorded = resume if resume is not None else (0, 0, 0, "")
        barren = 0
        while True:
            known = recorded.split(",") if recorded else []
            levels: list[str] = []
            passed = 0
            block_seed = _hash_int("stream", self.spec.seed, self.spec.source.split,
                                   block * self.spec.num_shards + self.shard)
            for k_scene, (epoch, position) in enumerate(self.block_scenes(block)):
                cut = None  # a replayed scene cut short when the level changed: its questions kept
                if k_scene < len(known):
                    level, _, kept = known[k_scene].partition(":")
                    level, cut = int(level), int(kept) if kept else None
                else:
                    level = curriculum.level(yielded)
                    self._warn_if_frozen(curriculum)
                levels.append(known[k_scene] if k_scene < len(known) else str(level))
                difficulty = curriculum.levels[level]
                scene = self.scene(position, difficulty)
                questions = self._questions(scene, position, difficulty, block_seed, k_scene == 0)
                barren = 0 if questions else barren + 1
                if barren >= MAX_BARREN_SCENES:
                    raise StreamError(f"{barren} scenes in a row gave no problem at {difficulty}: these scenes "
                                      "cannot meet it (synthetic worlds: raise max_objects or max_answer)")
                image = scene_text = None
                for k, question in enumerate(questions):
                    if cut is not None and k >= cut:
                        break
                    if passed >= skip and curriculum.level(yielded) != level:
                        # The level changed within the scene: its other questions are dropped, so that
                        # every problem is drawn at the level in force when it is drawn, whatever
                        # questions_per_image (recorded as level:kept for a resume).
                        levels[-1] = f"{level}:{k}"
                        break
                    passed += 1
                    if passed <= skip:
                        continue  # yielded before the checkpoint: regenerated only for the balancing counts
                    if self.quota is not None and yielded >= self.quota:
                        return
                    if image is None:  # rendered (or read) once per scene, and never for replayed problems
                        image, scene_text = self.image(scene, position), _SCENE_JSON(scene)
                    row = self._row(scene, position, epoch, k, question, image, scene_text, yielded)
                    if row is not None:
                        yielded += 1
                        yield (block, passed, ",".join(levels)), row["question_id"], row
                if self.quota is not None and yielded >= self.quota:
                    return
            block, skip, recorded = block + 1, 0, ""

    def _warn_if_frozen(self, curriculum: Curriculum) -> None:
        if self.warned or curriculum.by != "step" or len(curriculum.levels) == 1:
            return
        self.warned = True
        try:
            from torch.utils.data import get_worker_info
        except ImportError:
            return
        if get_worker_info() is not None:
            logger.warning("clevr_math.stream: a curriculum by='step' in a DataLoader worker does not see the "
                           "training loop's steps (the worker has a copy); use by='problems' there")

    def _questions(self, scene: dict, position: int, difficulty: Difficulty, block_seed: int,
                   new_block: bool) -> list[dict]:
        if new_block:
            for generator in self.generators.values():
                # Every block draws from its own seed and balances its answers afresh.
                generator.options = dataclasses.replace(generator.options, seed=block_seed)
                generator._reset()
        pick = random.Random(_hash_int(block_seed, position)).random()
        for share, template_set, question_types in difficulty.templates():
            pick -= share
            if pick < 0:
                break
        key = (template_set, question_types, difficulty.max_answer, self.spec.questions_per_image)
        generator = self.generators.get(key)
        if generator is None:
            generator = self.generators[key] = copy.copy(_prototype(*key))
            if self.spec.step_scenes:  # a question whose steps cannot be placed is replaced by another
                generator.on_question = functools.partial(add_steps, seed=self.spec.seed)
            generator.options = dataclasses.replace(generator.options, seed=block_seed)
            generator._reset()
        questions = generator.generate_scene(scene, position, validate=False)
        index = SceneIndex(scene, validate=False)
        for question in questions:
            # The executor's own answer (compiled and checked, then run on this scene), not the search's.
            if answer(_compiled(question["program"]), index) != question["answer"]:
                raise AssertionError(f"the executor disagrees with the generator on {question['question']!r} "
                                     f"({scene.get('image_filename')}): a bug, please report it")
            if "steps" in question:  # each step's count, the answer on the last, kept objects unchanged
                check_steps(scene, question["program"], question["category"], question["steps"],
                            question["intermediate_counts"], question["answer"])
        return questions

    def _row(self, scene: dict, position: int, epoch: int, k: int, question: dict, image: dict, scene_text: str,
             yielded: int):
        spec = self.spec
        if spec.exclude and image_key(question["question"], image["bytes"]) in spec.exclude:
            return None
        image_index = scene.get("image_index", position)
        # The builder's question ids: CLEVR's split name, the image, the question's rank on it.
        question_id = f"{spec.source.split}_{image_index:06d}_{k}" + (f"_p{epoch}" if epoch else "")
        # A fresh image dict per row, as datasets' encoder makes one (a row may be changed by its user).
        row = question_row({**question, "num_objects": len(scene["objects"])}, question_id,
                           {"bytes": image["bytes"], "path": None})
        index = yielded * spec.num_shards + self.shard
        built = prompt_row(row, dataset=_prompt_spec(), style=spec.style, split=spec.split, index=index)
        # What datasets' encode-then-decode would change (see _EncodedPieces); the rest is already
        # in the encoded form: plain ints and strings, structs and program nodes in their schema's order.
        pieces = _encoded_pieces(spec.style)
        built["prompt"], built["verl_prompt"] = pieces.prompts(row["question"])
        built["category"] = pieces.category[built["category"]]
        built |= {"question": row["question"], "program": row["program"], "cot": row["cot"],
                  "scene": scene_text, "steps": steps_json(question["steps"]) if "steps" in question else None}
        if spec.render_steps:
            _with_step_images(built, scene, question["steps"])
        return built


def _with_step_images(built: dict, scene: dict, steps: list[dict]) -> None:
    """The row's images become every world of the problem (before, after operation 1, ...), drawn by
    Pillow with the first image's camera, and its prompts get one image placeholder per image."""
    camera = studio_camera(scene)
    built["images"] = [{"bytes": world_png(world, camera), "path": None} for world in (scene, *steps)]
    with_media_count(built, len(built["images"]))


def _lane_problems(shard: list[int], quota: list[int | None], spec: _Spec, resume: tuple | None = None):
    # gen_kwargs lists hold one shard here (datasets splits them one per shard).
    (lane,), (count,) = shard, quota
    return _Lane(lane, count, spec).problems(resume)


def _source(data_dir: str | os.PathLike | None, split: str) -> _Source:
    if split not in _CLEVR_SPLIT:
        raise StreamError(f"split must be one of {', '.join(_CLEVR_SPLIT)}, got {split!r}")
    clevr_split = _CLEVR_SPLIT[split]
    if data_dir is None:
        assert clevr_split in SYNTHETIC_SPLITS
        return _Source(clevr_split)
    root = clevr_root(os.path.abspath(os.path.expanduser(os.fspath(data_dir))))
    try:  # only this split's scene file and images: a val stream needs no train scenes
        return _Source(clevr_split, split_source(root, clevr_split, _STREAM_DATA_OPTIONS.format(split=clevr_split)))
    except ClevrDataError as exc:
        raise StreamError(str(exc)) from None


def _cogent_rule(cogent: str | Mapping | None) -> tuple | None:
    """``cogent=`` as WorldRules.combos: ``"A"``/``"B"`` (CLEVR-CoGenT) or a mapping shape -> colours."""
    from builder_utils.clevr.synth.controls import cogent_combos
    from builder_utils.clevr.synth.scenes import combos_of

    if cogent is None:
        return None
    if isinstance(cogent, str):
        try:
            return combos_of(cogent_combos(cogent))
        except ValueError:
            raise StreamError(f"cogent must be 'A', 'B' or a mapping shape -> colours, got {cogent!r}") from None
    vocab = load_vocabulary()
    if not isinstance(cogent, Mapping) or not cogent:
        raise StreamError(f"cogent must be 'A', 'B' or a mapping shape -> colours, got {cogent!r}")
    for shape, colours in cogent.items():
        listed = [colours] if isinstance(colours, str) else colours
        if shape not in vocab.shapes or not isinstance(listed, (list, tuple, set, frozenset)) or not listed or any(
                c not in vocab.colors for c in listed):
            raise StreamError(f"cogent: {shape!r} -> {colours!r}: give a shape ({', '.join(vocab.shapes)}) and a "
                              f"list of colours ({', '.join(vocab.colors)})")
    return combos_of(cogent)


def stream(
    data_dir: str | os.PathLike | None = None,
    *,
    seed: int = 0,
    num_questions: int | None = None,
    split: str = "train",
    curriculum: Curriculum | None = None,
    exclude: str | os.PathLike | Sequence | frozenset | None = None,
    num_shards: int = NUM_SHARDS,
    questions_per_image: int = QUESTIONS_PER_IMAGE,
    prompt_style_name: str = DEFAULT_PROMPT_STYLE,
    trainer_format: str | None = None,
    step_scenes: bool = False,
    render_steps: bool = False,
    cogent: str | Mapping | None = None,
    **difficulty: Any,
) -> datasets.IterableDataset:
    """A ``datasets.IterableDataset`` of CLEVR-Math problems; ``data_dir`` None: synthetic worlds,
    ``num_questions`` None: endless, ``difficulty``: :class:`Difficulty`'s knobs (or a ``curriculum``);
    ``trainer_format``: the rows in a trainer's own layout (``r1v``, ``easyr1``, ...; README,
    "Which trainer"), as ``clevr-math export --config <it>`` writes them.
    ``step_scenes``: each row's ``steps`` holds the scene graph after each operation (JSON text);
    ``render_steps`` (implies it): each row's ``images`` are every world of the problem in order.

    ``cogent``: the shape-colour rule of every scene of this split's synthetic worlds, ``"A"`` or
    ``"B"`` (CLEVR-CoGenT's conditions) or a mapping shape -> colours (shapes not named are not
    drawn): train on ``stream(split="train", cogent="A")``, test on ``stream(split="test", cogent="B")``.

    >>> row = next(iter(stream(seed=1, num_operations=6, max_answer=20, max_objects=12)))
    >>> row["num_operations"], row["category"], row["images"][0].size
    (6, 5, (480, 320))
    >>> stream(colour="red")
    Traceback (most recent call last):
    ...
    clevr_math.streaming.StreamError: unknown stream option colour; difficulty knobs: num_operations, operations, categories, max_answer, max_objects, adversarial, confounder
    """
    unknown = sorted(set(difficulty) - set(difficulty_fields()))
    if unknown:
        raise StreamError(f"unknown stream option {', '.join(unknown)}; difficulty knobs: "
                          f"{', '.join(difficulty_fields())}")
    try:
        # every argument checked here, at the call (not on the first iteration, inside datasets)
        FilePath()("data_dir", data_dir)
        Choice(tuple(_CLEVR_SPLIT))("split", split)
        Instance(Curriculum, optional=True)("curriculum", curriculum)
        Instance(str, os.PathLike, list, tuple, frozenset, optional=True)("exclude", exclude)
        for k, path in enumerate(exclude if isinstance(exclude, (list, tuple)) else ()):
            FilePath()(f"exclude[{k}]", path)
        Instance(str)("prompt_style_name", prompt_style_name)
        Integer(0, maximum=MAX_SEED)("seed", seed)
        Integer(1, maximum=MAX_SHARDS)("num_shards", num_shards)
        Integer(1, maximum=MAX_QUESTIONS_PER_IMAGE)("questions_per_image", questions_per_image)
        Integer(0, maximum=MAX_STREAM_QUESTIONS, optional=True)("num_questions", num_questions)
        prompt_style(prompt_style_name)
        check_trainer_format(trainer_format)
        for name, value in (("step_scenes", step_scenes), ("render_steps", render_steps)):
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        if render_steps and trainer_format is not None:
            # the trainer layouts are written for one image a row: the step images would be lost
            raise ValueError(f"render_steps rows are in the prompts layout (several images a row); "
                             f"trainer_format={trainer_format!r} takes one image")
        if curriculum is None:
            curriculum = Curriculum.fixed(Difficulty(**difficulty))
        elif difficulty:
            raise ValueError(f"give the difficulty in the curriculum, not also as {', '.join(sorted(difficulty))}")
    except ValueError as exc:
        raise StreamError(str(exc)) from None
    combos = _cogent_rule(cogent)
    source = _source(data_dir, split)
    if combos is not None and any(level.confounder for level in curriculum.levels):
        raise StreamError("cogent and confounder both set the shape-colour rule: give one")
    if source.folder is not None and combos is not None:
        raise StreamError("cogent shapes synthetic worlds; a CLEVR folder's scenes keep their own colours (drop "
                          "data_dir, or write a CoGenT world with `clevr-math synth --cogent A` and read it)")
    if source.folder is not None:
        for level in curriculum.levels:
            if level.max_objects != Difficulty().max_objects or level.confounder:
                raise StreamError("max_objects and confounder shape synthetic worlds; a CLEVR folder's scenes keep "
                                  "their own objects and colours (drop data_dir for synthetic worlds)")
    if exclude is not None and not isinstance(exclude, frozenset):
        exclude = evaluation_keys(exclude)
    spec = _Spec(source, split, seed, curriculum, num_shards, questions_per_image, prompt_style_name, exclude or frozenset(),
                 step_scenes=step_scenes or render_steps, render_steps=render_steps, combos=combos)
    if num_questions is None:
        quotas = [None] * num_shards
    else:
        quotas = [num_questions // num_shards + (shard < num_questions % num_shards) for shard in range(num_shards)]
    examples = _StreamExamples(_lane_problems, {"shard": list(range(num_shards)), "quota": quotas,
                                                "spec": spec})
    rule = "" if cogent is None else f" (shape-colour rule: {'CoGenT ' + cogent if isinstance(cogent, str) else dict(combos)})"
    info = datasets.DatasetInfo(features=stream_features(),
                                description="CLEVR-Math problems streamed by clevr_math.stream" + rule)
    rows = datasets.IterableDataset(examples, info=info, split=datasets.NamedSplit(split))
    return rows if trainer_format is None else in_format(rows, trainer_format, prompt_style_name, split)


def check_trainer_format(trainer_format: str | None) -> None:
    """A StreamError unless ``trainer_format`` is None or a trainer layout CLEVR-Math has.

    >>> check_trainer_format("r1_aqa")
    Traceback (most recent call last):
    ...
    clevr_math.streaming.StreamError: the r1_aqa layout does not serve CLEVR-Math; valid: r1v, easyr1, swift, vlm_r1, reason_rft, reason_rft_cot, lmm_r1
    """
    if trainer_format is None:
        return
    from builder_utils.hub.layout import layout_of
    from builder_utils.hub.trainer_formats import FORMATS

    layout = layout_of(ClevrMath)
    served = [name for name, fmt in FORMATS.items() if fmt.available(layout)]
    if trainer_format not in served:
        raise StreamError(f"the {trainer_format} layout does not serve CLEVR-Math; valid: {', '.join(served)}")


def in_format(rows, trainer_format: str, style: str = DEFAULT_PROMPT_STYLE, split: str = "train"):
    """The stream's (or a problem set's) rows in a trainer's layout (:mod:`builder_utils.hub.trainer_formats`).

    >>> row = next(iter(in_format(stream(seed=1, num_questions=1), "r1v")))
    >>> row["solution"] == f"<answer> {row['label']} </answer>", row["image"].size
    (True, (480, 320))
    """
    from builder_utils.hub.layout import layout_of
    from builder_utils.hub.trainer_formats import in_trainer_format

    try:
        return in_trainer_format(rows, trainer_format, layout_of(ClevrMath), style, split)
    except ValueError as exc:
        raise StreamError(str(exc)) from None


# -- export: `clevr-math export --config prompts --stream_questions N` ------------------------


def _stream_rows(kwargs: dict) -> Iterator[dict]:
    # Module level with plain keyword arguments: datasets fingerprints the generator and its gen_kwargs.
    yield from stream(**kwargs).decode(False)


class StreamExport:
    """The ``--stream_questions`` source of ``clevr-math export``: :func:`stream` rows as the ``prompts`` config.

    >>> import argparse
    >>> parser = argparse.ArgumentParser()
    >>> StreamExport().add_arguments(parser)
    >>> args = parser.parse_args(["--stream_questions", "5", "--num_operations", "3"])
    >>> args.num_operations, StreamExport().stream_kwargs(args)["num_questions"]
    (3, 5)
    """

    def add_arguments(self, parser) -> None:
        """Add ``--stream_questions``, ``--stream_seed``, ``--stream_split`` and the difficulty flags."""
        from builder_utils.options import add_option_flags

        group = parser.add_argument_group("stream (the prompts configuration from clevr_math.stream)")
        group.add_argument("--stream_questions", type=Integer(1, maximum=MAX_STREAM_EXPORT).parse, default=None,
                           metavar="N",
                           help="write N problems of clevr_math.stream as the prompts configuration (synthetic "
                                "worlds, or the --data_dir folder's scenes); needs --config prompts")
        group.add_argument("--stream_seed", type=Integer(0, maximum=MAX_SEED).parse, default=0,
                           help="seed of the stream (default: %(default)s)")
        group.add_argument("--stream_split", default="train", choices=("train", "validation", "test"),
                           help="split of the stream's scenes (default: %(default)s)")
        group.add_argument("--stream_cogent", default=None, choices=("A", "B"),
                           help="CLEVR-CoGenT's shape-colour condition of the stream's synthetic worlds (default: none)")
        add_option_flags(parser, {"difficulty": group}, cls=Difficulty)

    def stream_kwargs(self, args) -> dict:
        """The keyword arguments of :func:`stream` the command line asks for (checked)."""
        from builder_utils.options import options_from_args

        difficulty = options_from_args(args, cls=Difficulty)
        if args.stream_questions is None:
            raise ValueError("--stream_questions must be given")
        return {"data_dir": getattr(args, "data_dir", None), "seed": args.stream_seed,
                "num_questions": args.stream_questions, "split": args.stream_split,
                "prompt_style_name": getattr(args, "prompt_style", DEFAULT_PROMPT_STYLE),
                "cogent": getattr(args, "stream_cogent", None), **dataclasses.asdict(difficulty)}

    def given(self, args):
        """None without ``--stream_questions``; else the ``given`` of ``export_builder``."""
        if args.stream_questions is None:
            from builder_utils.options import options_from_args

            if options_from_args(args, cls=Difficulty) != Difficulty() or getattr(args, "stream_cogent", None):
                raise ValueError("the difficulty flags shape a stream: add --stream_questions N --config prompts")
            return None
        configs = [name for value in args.config or [] for name in value.split(",") if name]
        if configs != ["prompts"]:
            raise ValueError(f"--stream_questions writes the prompts configuration only: pass --config prompts "
                             f"(got {', '.join(configs) or 'every configuration'})")
        kwargs = self.stream_kwargs(args)
        stream(**kwargs)  # every check now, before the export starts

        def rows(cache_dir: str) -> dict:
            built = datasets.Dataset.from_generator(_stream_rows, features=stream_features(), cache_dir=cache_dir,
                                                    gen_kwargs={"kwargs": kwargs}, split=kwargs["split"])
            return {"prompts": {kwargs["split"]: built}}

        return rows
