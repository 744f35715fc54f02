"""Speed of the synthetic CLEVR world: scene generation, drawing, PNG encoding, folder writing.

Run: .venv/bin/python benchmarks/bench_synth.py [--scenes 500] [--folder_scenes 2000]
CPU time (process_time) is reported so that a busy machine inflates the figures less.
"""
import argparse
import os
import shutil
import tempfile
import time

from builder_utils.clevr.synth import draw_scene, generate_scenes, write_clevr_folder
from builder_utils.clevr.synth.render import encode_png


def best_cpu_seconds(action, repeats=3):
    timings = []
    for _ in range(repeats):
        start = time.process_time()
        action()
        timings.append(time.process_time() - start)
    return min(timings)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=500)
    parser.add_argument("--folder_scenes", type=int, default=2000)
    args = parser.parse_args()
    n = args.scenes
    draw_scene(generate_scenes(1, 0)[0])  # warm the sprite caches
    scenes = generate_scenes(n, 1, "train")
    generate = best_cpu_seconds(lambda: generate_scenes(n, 1, "train"))
    draw = best_cpu_seconds(lambda: [draw_scene(s) for s in scenes])
    images = [draw_scene(s) for s in scenes]
    encode = best_cpu_seconds(lambda: [encode_png(im) for im in images])
    print(
        f"per scene: generate {generate / n * 1e3:.2f} ms, draw {draw / n * 1e3:.2f} ms, "
        f"png encode {encode / n * 1e3:.2f} ms, total {(generate + draw + encode) / n * 1e3:.2f} ms"
    )
    out = tempfile.mkdtemp()
    try:
        start = time.process_time()
        write_clevr_folder(out, {"train": args.folder_scenes}, seed=0, progress=False)
        seconds = time.process_time() - start
        size = sum(os.path.getsize(os.path.join(r, f)) for r, _, files in os.walk(out) for f in files)
        print(
            f"write_clevr_folder {args.folder_scenes} scenes: {seconds:.1f} s CPU = "
            f"{seconds / args.folder_scenes * 1e3:.2f} ms/scene, {size / args.folder_scenes / 1024:.1f} KiB/scene"
        )
    finally:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
