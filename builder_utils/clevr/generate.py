"""The question generator's library API.

>>> import tempfile
>>> from builder_utils.clevr import answer, load_scenes
>>> from builder_utils.clevr.synth import write_clevr_folder
>>> from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
>>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 2}, seed=0, render=False, progress=False)
>>> scenes = load_scenes(root / "scenes" / "CLEVR_val_scenes.json")
>>> gen = QuestionGenerator(GeneratorOptions(templates="clevr", seed=0))
>>> questions = list(gen.generate(scenes, 0, 2))          # scenes [0, 2): 10 templates per image
>>> len(questions), sorted(questions[0])[:4]
(20, ['answer', 'category', 'cot', 'image_filename'])
>>> questions[0]["answer"] == answer(questions[0]["program"], scenes[0])
True

Why windows run anywhere: README, "generate-questions" (Reproducible).
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

# hashlib's own blake2b, without the OpenSSL library hashlib loads for its other hashes (~3 ms).
from _blake2 import blake2b

from .balance import AnswerBalancer, balancing_windows
from .cot import NodeTrace, SceneWords, program_shape, render_cot
from .math_cot import CLEVR_MATH_STEPS
from .engine import Instance, SearchStats, search
from .expand import expand_program, matching_steps
from .choices import SceneData, shuffled
from .plan import CompiledTemplate, bound_arithmetic, compile_template
from .executor import SceneIndex, answer_text
from .metadata import Metadata, default_metadata, load_metadata
from .options import DEFAULT_SEARCH_BUDGET, GeneratorOptions
from .question_types import select_templates
from .templates import Template, load_synonyms, load_template_set
from .text import TextPlan, number_agreement, with_post_prompt

__all__ = [
    "DEFAULT_SEARCH_BUDGET",
    "GeneratorOptions",
    "QuestionGenerator",
    "TemplateStats",
    "balancing_windows",
    "generate_parallel",
    "generate_windows",
    "run_window",
    "scene_seed",
    "task_scenes",
    "window_tasks",
]


@dataclass
class TemplateStats:
    """Per-template work and results over a generator's lifetime (for reports and tuning)."""

    key: str
    tried: int = 0
    instantiated: int = 0
    states: int = 0
    budget_exhausted: int = 0
    answers: dict[str, int] = field(default_factory=dict)


def scene_seed(seed: int, image_index: int) -> int:
    """A stable hash of (seed, image_index): the same on every platform and Python, unlike ``hash()``.

    >>> scene_seed(0, 0) == scene_seed(0, 0), scene_seed(0, 0) == scene_seed(0, 1)
    (True, False)
    """
    digest = blake2b(f"{seed}:{image_index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class QuestionGenerator:
    """Loads and validates metadata, templates and synonyms once, then generates questions.

    >>> gen = QuestionGenerator(GeneratorOptions())
    >>> [t.key for t in gen.templates][:2]
    ['compare_integer:0', 'compare_integer:1']
    """

    def __init__(self, options: GeneratorOptions | None = None,
                 on_question: Callable[[dict, dict], bool] | None = None):
        # on_question(question, scene): may add fields; False refuses the question and the search moves
        # on to the next template (step worlds: builder_utils.clevr.synth.insert.add_steps).
        self.on_question = on_question
        self.options = options = options or GeneratorOptions()
        self.metadata: Metadata = (
            load_metadata(options.metadata_file) if options.metadata_file is not None else default_metadata()
        )
        self.synonyms = load_synonyms(options.synonyms_json)
        source = options.template_dir if options.template_dir is not None else options.templates
        self.template_set = load_template_set(source, self.metadata, self.synonyms)
        self.templates: list[Template] = select_templates(self.template_set.templates, options.question_types)
        self.plans: list[CompiledTemplate] = [compile_template(t, self.metadata) for t in self.templates]
        if options.max_answer is not None:
            for plan in self.plans:
                if plan.template.answer_type == "Integer":
                    plan.answer_domain = tuple(range(options.max_answer + 1))
                if options.bound_intermediate_counts:
                    bound_arithmetic(plan, options.max_answer)
        self.stats = [TemplateStats(t.key) for t in self.templates]
        self._agreement = _number_agreement(self.metadata, self.synonyms)
        # What each template's questions share, prepared once: text variants, the program's
        # shape for the chain of thought, per node the (param, type) pairs it traces and
        # whether its choice ends with the object set it matched, and one trace to refill.
        self._texts = [TextPlan(t.text, p.param_types, self.synonyms, agreement=self._agreement)
                       for t, p in zip(self.templates, self.plans)]
        self._shapes = [program_shape(t.nodes) for t in self.templates]
        self._node_params = [tuple(tuple((name, p.param_types[name]) for name in node.side_inputs)
                                   for node in t.nodes) for t, p in zip(self.templates, self.plans)]
        self._matches = [matching_steps(p) for p in self.plans]
        self._traces = [[NodeTrace(node, {}, {}, None) for node in t.nodes] for t in self.templates]
        self._relations = self.metadata.values("Relation")
        self._reset()

    def _reset(self) -> None:
        self._use_counts = [0] * len(self.plans)
        self._balancers = [AnswerBalancer(p.answer_domain) for p in self.plans]
        self._misses = [0] * len(self.plans)

    def _budget(self, t: int) -> int:
        """Halved per consecutive miss, down to 1/16: a template balancing keeps refusing stops eating the run."""
        full = self.options.search_budget
        return max(full >> min(self._misses[t], 4), 1)

    def generate(
        self,
        scenes: Sequence[dict],
        start: int = 0,
        stop: int | None = None,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[dict]:
        """Yield the questions of scenes ``[start, stop)``; counts reset at ``start`` and every window.

        ``scenes``: a :class:`~builder_utils.clevr.scenes.SceneFile` (read in windows) or scene dicts (validated).
        """
        return self._generate(scenes, start, stop, base=0, progress=progress)

    def _generate(
        self, scenes: Sequence[dict], start: int, stop: int | None, base: int,
        progress: Callable[[int], None] | None = None,
    ) -> Iterator[dict]:
        """``generate`` over a sequence whose item 0 is absolute scene position ``base``."""
        total = len(scenes)
        stop = total if stop is None else min(stop, total)
        if not 0 <= start <= total:
            raise IndexError(f"start {start} out of range ({total} scenes)")
        window_reader = getattr(scenes, "window", None)
        info_split = (getattr(scenes, "info", None) or {}).get("split")
        validate = window_reader is None
        every = self.options.reset_counts_every
        chunk = 256
        for chunk_start in range(start, stop, chunk):
            chunk_stop = min(chunk_start + chunk, stop)
            batch = window_reader(chunk_start, chunk_stop) if window_reader else scenes[chunk_start:chunk_stop]
            for offset, scene in enumerate(batch):
                position = base + chunk_start + offset
                if position == base + start or (every and position % every == 0):
                    self._reset()
                yield from self.generate_scene(scene, position, validate=validate, default_split=info_split)
                if progress is not None:
                    progress(1)

    def generate_scene(
        self, scene: dict, position: int = 0, *, validate: bool = True, default_split: str | None = None
    ) -> list[dict]:
        """The questions of one scene, continuing the current balancing window."""
        index = SceneIndex(scene, validate=validate, metadata=self.metadata)
        image_index = scene.get("image_index", position)
        rng = random.Random(scene_seed(self.options.seed, image_index))
        data = SceneData(index, self._relations)
        words = SceneWords()  # what the chains of thought say about this scene's objects
        # Ties in use count are broken by the scene's own randomness.
        order = sorted(shuffled(range(len(self.plans)), rng), key=self._use_counts.__getitem__)
        questions: list[dict] = []
        instantiated = 0
        opts = self.options
        for t in order:
            plan, balancer, stats = self.plans[t], self._balancers[t], self.stats[t]
            max_answer = opts.max_answer if plan.template.answer_type == "Integer" else None

            if max_answer is None:
                admissible = balancer.allows
            else:
                def admissible(answer: Any, balancer=balancer, max_answer=max_answer) -> bool:
                    return balancer.allows(answer) and answer <= max_answer

            refused = [0]

            def on_accept(instance: Instance, t=t, balancer=balancer, refused=refused) -> bool:
                # Text is drawn at acceptance so that the random stream stays in search order.
                question = self._question(t, instance, index, scene, image_index, rng, default_split, words)
                if self.on_question is not None and not self.on_question(question, scene):
                    # Refused (a step world cannot be placed): the search tries another instance, a few
                    # times (each refusal costs the hook's work), then ends with this template unused.
                    refused[0] += 1
                    return refused[0] >= MAX_REFUSED
                balancer.add(instance.answer)
                questions.append(question)
                return True

            search_stats = SearchStats()
            asked_before = len(questions)
            tic = time.perf_counter() if opts.time_dfs else 0.0
            found = search(
                plan, data, rng, admissible, on_accept,
                max_instances=opts.instances_per_template, budget=self._budget(t), stats=search_stats,
            )
            found = found[:len(questions) - asked_before]  # without the one that ended a refused search
            self._misses[t] = 0 if found else self._misses[t] + 1
            stats.tried += 1
            stats.states += search_stats.states
            stats.budget_exhausted += search_stats.exhausted_budget
            if opts.verbose:
                took = f" in {1000 * (time.perf_counter() - tic):.2f} ms" if opts.time_dfs else ""
                outcome = f"{len(found)} question(s)" if found else "nothing"
                _log(f"{scene.get('image_filename', position)}: {plan.template.key}: {outcome}, "
                     f"{search_stats.states} states{took}")
            if found:
                stats.instantiated += 1
                for instance in found:
                    text = answer_text(instance.answer)
                    stats.answers[text] = stats.answers.get(text, 0) + 1
                self._use_counts[t] += 1
                instantiated += 1
                if instantiated >= opts.templates_per_image:
                    break
        return questions

    def _question(self, t: int, instance: Instance, index: SceneIndex, scene: dict, image_index: int,
                  rng: random.Random, default_split: str | None, words: SceneWords) -> dict:
        plan = self.plans[t]
        template = plan.template
        text = self._texts[t].render(instance.values, rng)
        if self.options.add_post_prompt:
            text = with_post_prompt(text, template.answer_type)
        program = expand_program(plan, instance)
        outputs = instance.outputs
        arithmetic = [outputs[k] for k in plan.arithmetic]
        # The template's trace, refilled in place: render_cot reads it only while it runs.
        get = instance.values.get
        trace = self._traces[t]
        for item, params, matches, output, choice in zip(trace, self._node_params[t], self._matches[t], outputs,
                                                          instance.choices):
            item.output = output
            item.selected = choice[-1] if matches else None
            if params:
                by_name, by_type = item.values, item.by_type
                for p, ptype in params:
                    by_name[p] = by_type[ptype] = get(p)
        return {
            "image_filename": scene.get("image_filename"),
            "image_index": image_index,
            "split": scene.get("split", default_split),
            "question": text,
            "program": program,
            "answer": answer_text(instance.answer),
            "template_filename": template.family,
            "question_family_index": template.family_index,
            "template_index": template.index,
            "category": template.category,
            # One table for every set: CLEVR-Math's renderers keep the engine's wording outside math programs.
            "cot": render_cot(trace, index, instance.answer, category=template.category, shape=self._shapes[t],
                              words=words, renderers=CLEVR_MATH_STEPS),
            "num_operations": len(arithmetic),
            "intermediate_counts": arithmetic,
        }


def _number_agreement(metadata: Metadata, synonyms) -> Callable[[str], str]:
    def spelled(values):
        return [w for v in values for w in (v, *synonyms.get(v, ()))]

    adjectives = spelled([v for t in ("Size", "Color", "Material") for v in metadata.values(t)])
    nouns = spelled([*metadata.values("Shape"), "thing", "object"])
    return number_agreement(adjectives, nouns)


def _log(message: str) -> None:
    from multiprocessing import parent_process

    if parent_process() is not None:  # a pool or Dask worker: no progress bar to protect
        print(message, file=sys.stderr, flush=True)
        return
    from tqdm import tqdm

    tqdm.write(message, file=sys.stderr)  # keeps the progress bar intact


#: Questions ``on_question`` may refuse in one template's search on one scene before the template is
#: given up there (the hook's work, e.g. placing step worlds, is the cost of each refusal).
MAX_REFUSED = 4


# -- tasks: balancing windows run anywhere ---------------------------------------------------

MIN_TASK_SCENES = 64
"""Consecutive balancing windows are merged into tasks of at least this many scenes, so that
tiny windows (``reset_counts_every`` 4, say) do not drown in per-task overhead."""

# Generators built in this (worker) thread, by options: templates are loaded once per thread.
# Per thread, because a generator holds the balancing counts of the window it runs, and a Dask
# worker started with several threads runs windows side by side.
_LOCAL = threading.local()


def _generators() -> dict[str, QuestionGenerator]:
    found = getattr(_LOCAL, "generators", None)
    if found is None:
        found = _LOCAL.generators = {}
    return found


def _generator_for(options: GeneratorOptions) -> QuestionGenerator:
    generator = _generators().get(repr(options))
    return _keep(options, QuestionGenerator(options)) if generator is None else generator


def _keep(options: GeneratorOptions, generator: QuestionGenerator) -> QuestionGenerator:
    """Make ``generator`` this thread's one generator, the one tasks with ``options`` use."""
    generators = _generators()
    generators.clear()
    generators[repr(options)] = generator
    return generator


def window_tasks(start: int, stop: int, reset_counts_every: int, *, min_scenes: int = MIN_TASK_SCENES,
                 cuts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """Tasks ``[a, b)`` of whole balancing windows (at least ``min_scenes``), never crossing ``cuts``.

    >>> window_tasks(0, 20, 4, min_scenes=6)
    [(0, 8), (8, 16), (16, 20)]
    >>> window_tasks(0, 20, 4, min_scenes=6, cuts=[12])
    [(0, 8), (8, 12), (12, 20)]
    """
    tasks: list[tuple[int, int]] = []
    cut_set = set(cuts)
    for a, b in balancing_windows(stop, reset_counts_every, start):
        if tasks and tasks[-1][1] - tasks[-1][0] < min_scenes and a not in cut_set:
            tasks[-1] = (tasks[-1][0], b)
        else:
            tasks.append((a, b))
    return tasks


def task_scenes(num_scenes: int, num_workers: int) -> int:
    """:data:`MIN_TASK_SCENES`, less when that leaves fewer than four tasks a worker (no balanced load).

    >>> task_scenes(100_000, 2), task_scenes(24, 2), task_scenes(24, 1)
    (64, 3, 64)
    """
    if num_workers <= 1:
        return MIN_TASK_SCENES
    return max(1, min(MIN_TASK_SCENES, num_scenes // (4 * num_workers)))


# Questions hold no reference cycles: skipping the encoder's cycle check (a dict entry per
# container) writes the same text as json.dumps, about a fifth faster.
_JSON = json.JSONEncoder(check_circular=False)


def run_window(options: GeneratorOptions, scenes: Sequence[dict], base: int, output: str = "dict") -> Any:
    """The task of :func:`generate_windows`: the questions of ``scenes``, first at window boundary ``base``.

    ``output``: ``"dict"``, ``"json"`` (texts), ``"arrow"`` (a table) or ``"jsonl"`` (the texts in one
    ``bytes``: far cheaper between processes, and Dask would decode a list of texts item by item).

    >>> from builder_utils.clevr.synth import generate_scenes
    >>> len(run_window(GeneratorOptions(templates_per_image=2), generate_scenes(2, seed=0), 0))
    4
    """
    generator = _generator_for(options)
    questions = generator._generate(scenes, 0, len(scenes), base)
    if output == "json":
        return [_JSON.encode(q) for q in questions]
    if output == "jsonl":
        # json.dumps escapes every newline inside a value: the texts split back exactly.
        return "\n".join(_JSON.encode(q) for q in questions).encode()
    if output == "arrow":
        from .question_files import questions_table

        return questions_table(list(questions))
    return list(questions)


def generate_windows(
    options: GeneratorOptions,
    scenes: Sequence[dict],
    tasks: Sequence[tuple[int, int]],
    *,
    num_workers: int = 1,
    dask: str | None = None,
    output: str = "dict",
    client: Any = None,
    generator: QuestionGenerator | None = None,
) -> Iterator[tuple[tuple[int, int], Any]]:
    """Yield ``((a, b), run_window(...))`` per task, in order, wherever :func:`ordered_map` runs them.

    A :class:`SceneFile` travels as path and offsets: a worker reads only its window.
    ``generator``: one just built from ``options``, reused here and in forked workers.

    >>> from builder_utils.clevr.synth import generate_scenes
    >>> [(r, len(qs)) for r, qs in generate_windows(GeneratorOptions(templates_per_image=1),
    ...                                             generate_scenes(3, seed=0), [(0, 2), (2, 3)])]
    [((0, 2), 2), ((2, 3), 1)]
    """
    from .distributed import in_this_process, ordered_map

    if generator is not None:
        if generator.options != options:
            raise ValueError("generate_windows: the generator was built for other options")
        _keep(options, generator)
    part = getattr(scenes, "part", None)
    # JSON texts cross to other processes packed in one bytes; here they stay a list.
    packed = output == "json" and not in_this_process(len(tasks), num_workers=num_workers, dask=dask, client=client)
    wire = "jsonl" if packed else output
    work = [(options, part(a, b) if part is not None else list(scenes[a:b]), a, wire) for a, b in tasks]
    results = ordered_map(run_window, work, num_workers=num_workers, dask=dask, client=client)
    for task, result in zip(tasks, results):
        yield task, ((result.decode().split("\n") if result else []) if packed else result)


def generate_parallel(
    options: GeneratorOptions,
    scenes: Sequence[dict],
    start: int = 0,
    stop: int | None = None,
    *,
    num_workers: int = 2,
    on_window: Callable[[int, int], None] | None = None,
    as_json: bool = False,
    dask: str | None = None,
) -> Iterator[dict | str]:
    """The questions of ``QuestionGenerator(options).generate``, computed by workers over windows.

    ``on_window(a, b)`` is called as each task's results arrive, in order.

    >>> from builder_utils.clevr.synth import generate_scenes
    >>> scenes = generate_scenes(4, seed=0)
    >>> opts = GeneratorOptions(reset_counts_every=2)
    >>> list(generate_parallel(opts, scenes, num_workers=2)) == list(QuestionGenerator(opts).generate(scenes))
    True
    """
    total = len(scenes)
    stop = total if stop is None else min(stop, total)
    # Validate everything in this process first, so bad input fails before workers start.
    QuestionGenerator(options)
    workers = num_workers if dask is None else max(num_workers, 2)
    tasks = window_tasks(start, stop, options.reset_counts_every, min_scenes=task_scenes(stop - start, workers))
    for (a, b), questions in generate_windows(options, scenes, tasks, num_workers=num_workers, dask=dask,
                                              output="json" if as_json else "dict"):
        yield from questions
        if on_window:
            on_window(a, b)
