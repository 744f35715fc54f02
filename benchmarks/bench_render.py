"""Cost of the Blender renderer per 480x320 image, against the Pillow renderer, and on Dask.

Run: .venv/bin/python benchmarks/bench_render.py --blender .venv-render/bin/python [--images 3]

CPU seconds are the Blender process's own (``getrusage(RUSAGE_CHILDREN)`` once it has exited),
less the CPU of a process that only starts and stops, divided by the images it rendered: wall
time on a shared machine says more about the neighbours than about Blender. Peak RSS is the
largest Blender process's. Each sample count renders the same scenes (placed beforehand, so
their object-index passes are not counted in the image rows). The Dask rows write a whole world
(index passes, retries and images) on a LocalCluster of 1 and 2 workers: wall seconds per image,
and the CPU seconds of its Blender processes (sampled with psutil every 0.2 s: the workers are
not this process's children) per image. Each sample row also gives its PSNR against the 64-sample
images of the same scenes (mean, then per scene).
"""

from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import psutil

from builder_utils.clevr.synth import render_scene, write_clevr_folder
from builder_utils.clevr.synth.blender import SCRIPT, BlenderRenderer, BlenderSettings, find_blender
from builder_utils.clevr.synth.folder import ImageOptions

SAMPLES = (6, 8, 16, 32, 64)
REFERENCE = 64  # the PSNR column compares each row with the images of this many samples
INDEX_REPEATS = 10


class BlenderCpu(threading.Thread):
    """The CPU seconds of every process running the studio script, sampled until stopped."""

    def __init__(self):
        super().__init__(daemon=True)
        self.seen: dict[int, float] = {}
        self.done = threading.Event()

    def run(self):
        while not self.done.wait(0.2):
            for proc in psutil.process_iter(["cmdline", "cpu_times"]):
                if str(SCRIPT) in (proc.info["cmdline"] or []) and proc.info["cpu_times"] is not None:
                    times = proc.info["cpu_times"]
                    self.seen[proc.pid] = times.user + times.system

    def total(self) -> float:
        self.done.set()
        self.join()
        return sum(self.seen.values())


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def blender_cpu(command, settings, action) -> float:
    """CPU seconds of one Blender process that starts, runs ``action(renderer)`` and exits."""
    before = children_cpu()
    with BlenderRenderer(command, settings) as renderer:
        renderer.start()
        action(renderer)
    return children_cpu() - before


def psnr(path: Path, reference: Path) -> float:
    """Peak signal-to-noise ratio of one 8-bit RGB image against another, in dB."""
    from PIL import Image

    with Image.open(path) as a, Image.open(reference) as b:
        x = np.asarray(a.convert("RGB"), dtype=np.float64)
        y = np.asarray(b.convert("RGB"), dtype=np.float64)
    return float(10 * np.log10(255.0 ** 2 / max(np.mean((x - y) ** 2), 1e-12)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blender", default=None, help="the interpreter (default: as synth finds it)")
    parser.add_argument("--images", type=int, default=3, help="images per sample count")
    parser.add_argument("--dask_scenes", type=int, default=6, help="scenes of each Dask world (0: no Dask rows)")
    parser.add_argument("--samples", type=int, nargs="+", default=list(SAMPLES))
    args = parser.parse_args()
    command = find_blender(args.blender)
    work = Path(tempfile.mkdtemp(prefix="bench-render-"))
    n = args.images

    startup = blender_cpu(command, BlenderSettings(), lambda r: None)
    print(f"Blender start-up and exit: {startup:.2f} CPU-s (subtracted below)")

    scenes = []

    def place(renderer):
        for k in range(n):
            scenes.append(renderer.scene_for(0, "val", k, min_pixels_per_object=200, scratch=work))

    placed = blender_cpu(command, BlenderSettings(), place)
    index_passes = sum(1 for _ in scenes)  # at least one pass per scene; retries add more
    print(f"placing {n} scenes (object-index passes, 1 sample): {(placed - startup) / index_passes:.2f} CPU-s "
          "per scene")

    def index_only(renderer):
        for _ in range(INDEX_REPEATS):
            for scene in scenes:
                renderer.index_pass(scene, scene["_studio"], work)

    cpu = blender_cpu(command, BlenderSettings(), index_only)
    print(f"| index pass (1 sample, flat colour) | {(cpu - startup) / (n * INDEX_REPEATS):.2f} |")
    rows = []
    for samples in args.samples:
        settings = BlenderSettings(samples=samples)

        def images(renderer):
            for k, scene in enumerate(scenes):
                renderer.render(scene, work / f"s{samples}-{k}.png")

        cpu = blender_cpu(command, settings, images)
        size = sum((work / f"s{samples}-{k}.png").stat().st_size for k in range(n)) / n / 1024
        rows.append((samples, (cpu - startup) / n, size))
    for samples, cpu, size in rows:
        quality = ""
        if REFERENCE in args.samples and samples != REFERENCE:
            values = [psnr(work / f"s{samples}-{k}.png", work / f"s{REFERENCE}-{k}.png") for k in range(n)]
            quality = f"{sum(values) / n:.1f} dB ({' / '.join(f'{v:.1f}' for v in values)})"
        print(f"| {samples} samples + OpenImageDenoise | {cpu:.2f} | {quality} | {size:.0f} KiB |")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS of a Blender process: {peak:.0f} MiB")

    plain = [{k: v for k, v in s.items() if not k.startswith("_")} for s in scenes]
    start = time.process_time()
    repeats = 20
    for _ in range(repeats):
        for k, scene in enumerate(plain):
            render_scene(scene, work / f"pillow-{k}.png")
    pillow = (time.process_time() - start) / (repeats * n)
    print(f"| Pillow renderer (same scenes, 480x320) | {pillow * 1e3:.1f} ms |")

    for workers in (1, 2) if args.dask_scenes else ():
        sampler = BlenderCpu()
        sampler.start()
        before_wall = time.perf_counter()
        write_clevr_folder(work / f"dask-{workers}", {"val": args.dask_scenes}, seed=1,
                           images=ImageOptions(renderer="blender", blender=args.blender), dask="local",
                           num_proc=workers, progress=False)
        wall = time.perf_counter() - before_wall
        cpu = sampler.total()
        print(f"| Dask LocalCluster, {workers} worker(s), {args.dask_scenes} scenes | wall {wall / args.dask_scenes:.1f} s "
              f"| Blender CPU {cpu / args.dask_scenes:.1f} s per image |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
