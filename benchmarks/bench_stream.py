"""Throughput and memory of clevr_math.stream: whole rows (media bytes included), per core.

Run: .venv/bin/python benchmarks/bench_stream.py [--scenes 2000] [--problems 5000] [--memory 1000000]

- folder: a rendered synthetic CLEVR_v1.0 folder of --scenes train scenes, the default difficulty
  (the paper's 13 templates), and chains of 6, 7 and 8 operations;
- synthetic: worlds made and rendered on the fly (new images), 4 and 1 problems per image;
- memory: RSS after 10k, 100k, ... up to --memory problems of one endless folder stream.

Rows are read as a trainer reads them, ``ds.decode(False)`` (images as PNG bytes: decoding
to PIL is the trainer's collator's work, ~3 ms an image). Rates are problems per CPU second of
this process (process_time), so that other jobs on a shared machine distort them less; the same
session's generator-only rate (QuestionGenerator over the same scenes) is printed beside them,
and for the default difficulty the rate of the stream's own rows before ``datasets`` handles them,
hence a per-problem split: generator, the stream's own work, ``datasets``' handling.
"""

import argparse
import resource
import tempfile
import time
from itertools import islice

from builder_utils.clevr import load_scenes
from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth import write_clevr_folder
from clevr_math import stream


def rate(ds, problems):
    """(problems per CPU second, distinct images per CPU second) over ``problems`` rows."""
    rows = iter(ds.decode(False))
    next(rows)  # templates loaded, caches warm
    images = set()
    start = time.process_time()
    for row in islice(rows, problems):
        assert row["images"][0]["bytes"][:4] == b"\x89PNG"
        images.add(row["image_filename"])
    seconds = time.process_time() - start
    return problems / seconds, len(images) / seconds


def own_rate(ds, problems):
    """Problems per CPU second of the stream's own rows, before ``datasets`` handles them: its
    examples iterable (private, ``ds._ex_iterable``) iterated directly."""
    rows = iter(ds._ex_iterable)
    next(rows)
    start = time.process_time()
    for _ in islice(rows, problems):
        pass
    return problems / (time.process_time() - start)


def breakdown(generator_rate, own, whole):
    """Milliseconds per problem: the generator, the stream's own work, ``datasets``' handling."""
    return (f"per problem: generator {1e3 / generator_rate:.3f} ms, "
            f"stream's own {1e3 / own - 1e3 / generator_rate:.3f} ms, datasets {1e3 / whole - 1e3 / own:.3f} ms")


def rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=2000)
    parser.add_argument("--problems", type=int, default=5000)
    parser.add_argument("--memory", type=int, default=0, help="problems of the memory run (0: skip)")
    parser.add_argument("--only", choices=("folder", "synthetic", "memory"), default=None)
    parser.add_argument("--only_default", action="store_true", help="folder: the default difficulty only")
    args = parser.parse_args()
    root = write_clevr_folder(tempfile.mkdtemp(prefix="bench-stream-"), {"train": args.scenes, "val": 10},
                              seed=0, progress=False)
    if args.only in (None, "folder"):
        scenes = load_scenes(root / "scenes" / "CLEVR_train_scenes.json")
        generator = QuestionGenerator(GeneratorOptions(templates="clevr_math", templates_per_image=4, max_answer=10,
                                                       bound_intermediate_counts=True, reset_counts_every=16))
        start = time.process_time()
        count = len(list(generator.generate(scenes, 0, min(len(scenes), args.problems // 4))))
        generator_rate = count / (time.process_time() - start)
        print(f"generator only (13 templates, 4 per image): {generator_rate:,.0f} questions/s")
        for label, difficulty in (("13 templates", {}), ("13 templates, 10 per image", {"questions_per_image": 10}),
                                  ("6 operations", {"num_operations": 6}), ("7 operations", {"num_operations": 7}),
                                  ("8 operations", {"num_operations": 8})):
            if args.only_default and difficulty:
                continue
            problems = args.problems if not difficulty.get("num_operations") else args.problems // 5
            per_second, _ = rate(stream(root, seed=0, **difficulty), problems)
            print(f"folder, {label}: {per_second:,.0f} problems/s")
            if not difficulty:
                own = own_rate(stream(root, seed=0).decode(False), problems)
                print(f"folder, {label}, the stream's rows before datasets: {own:,.0f} problems/s; "
                      + breakdown(generator_rate, own, per_second))
    if args.only in (None, "synthetic"):
        for per_image in (4, 1):
            per_second, images = rate(stream(seed=0, questions_per_image=per_image), args.problems // (5 - per_image))
            print(f"synthetic worlds, {per_image} per image: {per_second:,.0f} problems/s, {images:,.0f} new images/s")
    if args.memory:
        rows = iter(stream(root, seed=0, num_shards=1).decode(False).select_columns(["question_id", "images"]))
        mark, done, start = 10_000, 0, time.time()
        for _ in rows:
            done += 1
            if done == mark:
                print(f"memory: {done:,} problems, peak RSS {rss_mb():,.0f} MB ({time.time() - start:,.0f} s)", flush=True)
                if mark >= args.memory:
                    break
                mark *= 10


if __name__ == "__main__":
    main()
