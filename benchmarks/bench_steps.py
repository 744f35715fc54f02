"""The cost of step scene graphs and step images (issue 38).

Run: .venv/bin/python benchmarks/bench_steps.py [--scenes 200] [--problems 1000]

- questions per CPU second of ``QuestionGenerator`` over the same synthetic scenes, with and
  without ``step_scenes`` (the paper's 13 templates; chains of 4 operations);
- problems per CPU second of ``clevr_math.stream`` (synthetic worlds, 4 problems per image) with
  and without ``step_scenes``;
- step images per CPU second: every step world of those questions drawn by Pillow and encoded
  as PNG (``synth.insert.world_png``, the first image's camera).

CPU seconds of this process (``time.process_time``), so that other jobs on a shared machine
distort the rates less.
"""

import argparse
import functools
import time
from itertools import islice

from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth import generate_scene
from builder_utils.clevr.synth.insert import add_steps, studio_camera, world_png
from clevr_math import stream


def generator_rate(scenes, steps: bool, **options):
    gen = QuestionGenerator(GeneratorOptions(seed=0, bound_intermediate_counts=True, **options),
                            on_question=functools.partial(add_steps, seed=0) if steps else None)
    start = time.process_time()
    questions = [(scene, q) for i, scene in enumerate(scenes) for q in gen.generate_scene(scene, i)]
    return len(questions) / (time.process_time() - start), questions


def stream_rate(problems: int, steps: bool):
    rows = iter(stream(seed=0, num_shards=1, step_scenes=steps).decode(False))
    next(rows)
    start = time.process_time()
    for _ in islice(rows, problems):
        pass
    return problems / (time.process_time() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=200)
    parser.add_argument("--problems", type=int, default=1000)
    args = parser.parse_args()
    scenes = [generate_scene(0, "val", i, max_objects=10) for i in range(args.scenes)]
    stepped = []
    for name, options in (("clevr_math (13 templates)", {"templates": "clevr_math", "max_answer": 10}),
                          ("chains of 4", {"templates": "clevr_math_long_chains", "max_answer": 20,
                                           "question_types": ("chain_4", "same_sign_4")})):
        plain, _ = generator_rate(scenes, False, **options)
        with_steps, questions = generator_rate(scenes, True, **options)
        stepped += questions
        print(f"generator, {name}: {plain:.0f} questions/s without steps, {with_steps:.0f} with "
              f"({len(questions)} questions)")
    for steps in (False, True):
        print(f"stream, synthetic worlds, 4 per image, step_scenes={steps}: {stream_rate(args.problems, steps):.0f} problems/s")
    worlds = [(world, studio_camera(scene)) for scene, q in stepped[:1000] for world in q["steps"]]
    start = time.process_time()
    for world, camera in worlds:
        world_png(world, camera)
    print(f"step images (Pillow, 480x320, PNG): {len(worlds) / (time.process_time() - start):.0f} images/s "
          f"over {len(worlds)} step worlds")


if __name__ == "__main__":
    main()
