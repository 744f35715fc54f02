"""Speed of the synthetic CLEVR world (Pillow renderer): scene generation (with CLEVR's visibility
floor, checked on the renderer's object-index pass), drawing, PNG encoding, folder writing.

Run: .venv/bin/python benchmarks/bench_synth.py [--scenes 500] [--folder_scenes 2000]
CPU time (process_time) is reported so that a busy machine inflates the figures less. Older
checkouts (no index pass) print what they have.
"""
import argparse
import os
import resource
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
        f"per scene ({images[0].width}x{images[0].height}): generate {generate / n * 1e3:.2f} ms, "
        f"draw {draw / n * 1e3:.2f} ms, png encode {encode / n * 1e3:.2f} ms, "
        f"total {(generate + draw + encode) / n * 1e3:.2f} ms = {n / (generate + draw + encode):.0f} images/s"
    )
    try:
        from builder_utils.clevr.synth import visible_pixels
        from builder_utils.clevr.synth.scenes import MAX_WORLD_OBJECTS, scene_candidates
        from builder_utils.clevr.synth.visibility import min_pixels_for
    except ImportError:
        pass
    else:
        index = best_cpu_seconds(lambda: [visible_pixels(s) for s in scenes])
        floor = min_pixels_for(images[0].width, images[0].height)
        for label, max_objects in (("3-10 objects", 10), (f"up to {MAX_WORLD_OBJECTS} objects", MAX_WORLD_OBJECTS)):
            tries = 0
            for i in range(n):
                for candidate in scene_candidates(1, "train", i, max_objects=max_objects):
                    tries += 1
                    if min(visible_pixels(candidate)) >= floor:
                        break
            print(f"{label}: {tries / n:.3f} placements per scene ({tries - n} of {n} scenes placed again)")
        print(f"object-index pass (visibility, counted in generate): {index / n * 1e3:.2f} ms per placement")
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
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
