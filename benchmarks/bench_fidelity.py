"""How close our renderers come to CLEVR's own images of the same scene graphs.

Run: .venv/bin/python benchmarks/bench_fidelity.py --renderer pillow blender
         --blender /work/main/.venv-render/bin/python [--scenes 12] [--out DIR]
     [--base_scene_blendfile B --shape_dir S --material_dir M]   (CLEVR's own asset files, from a
     copy of its repository's image_generation/data; never shipped, never committed)

Reads ``../shared/data/clevr/official_renders/`` (134 official CLEVR v1.0 train images and their
official scene graphs; never copied into the repository). Each scene is drawn with the camera
fitted to its official ``pixel_coords`` (CLEVR jittered the camera per image; the fit recovers it)
and the studio's lights without jitter (CLEVR's light jitter cannot be recovered). Then, against
CLEVR's image of the same scene:

- PSNR of the whole image (8-bit RGB);
- mean brightness, ours / CLEVR's;
- colour at each object's official ``pixel_coords`` (a 5x5 patch), mean absolute difference (0-255);
- the floor in front (the bottom 16 rows), mean absolute difference (0-255).

``--scenes N`` takes the first N scenes in file order (the tuning subset is the first 12);
``--clean`` adds the Blender default's cleanliness: PSNR against a 64-sample render inside each
object's mask, small and large objects apart. ``--out DIR`` keeps the renders (``<renderer>/<image_filename>``), so a re-run with the same
``--out`` measures them again without rendering, e.g. to look at them beside CLEVR's.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from builder_utils.clevr.synth.camera import fit_camera

_REPO = Path(__file__).resolve().parents[1]
# ../shared beside the checkout (or beside the folder of worktrees)
OFFICIAL = next((p for p in (_REPO.parent / "shared", _REPO.parent.parent / "shared") if p.is_dir()),
                _REPO.parent / "shared") / "data" / "clevr" / "official_renders"
PATCH = 2  # half-size of the colour patch: 5x5
FLOOR_ROWS = 16
REFERENCE_SAMPLES = 64


def official(root: Path, count: int | None) -> list[tuple[dict, np.ndarray]]:
    scenes = json.loads((root / "CLEVR_train_scenes_subset.json").read_text())["scenes"]
    scenes = scenes[:count] if count else scenes
    return [(s, np.asarray(Image.open(root / "images" / s["image_filename"]).convert("RGB"))) for s in scenes]


def fitted_camera(scene: dict):
    points = [o["3d_coords"] for o in scene["objects"]]
    pixels = [o["pixel_coords"][:2] for o in scene["objects"]]
    return fit_camera(points, pixels)


def measures(ours: np.ndarray, theirs: np.ndarray, scene: dict) -> dict:
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    mse = float(np.mean((a - b) ** 2))
    patches = []
    h, w = a.shape[:2]
    for obj in scene["objects"]:
        x, y = int(obj["pixel_coords"][0]), int(obj["pixel_coords"][1])
        box = (slice(max(0, y - PATCH), min(h, y + PATCH + 1)), slice(max(0, x - PATCH), min(w, x + PATCH + 1)))
        patches.append(float(np.abs(a[box].mean(axis=(0, 1)) - b[box].mean(axis=(0, 1))).mean()))
    return {
        "psnr": 10 * np.log10(255.0 ** 2 / max(mse, 1e-12)),
        "brightness": float(a.mean() / b.mean()),
        "colour": float(np.mean(patches)),
        "floor": float(np.abs(a[-FLOOR_ROWS:].mean(axis=(0, 1)) - b[-FLOOR_ROWS:].mean(axis=(0, 1))).mean()),
    }


def render_pillow(scene: dict, camera, path: Path) -> None:
    from builder_utils.clevr.synth.render import render_scene

    render_scene(scene, path, camera)


def asset_files(args) -> tuple | None:
    """CLEVR's asset files as the Blender studio takes them (None: the studio built in code), through
    the one mechanism ``clevr-math synth`` and ``render`` use."""
    from builder_utils.clevr.synth.controls import WorldOptions
    from builder_utils.clevr.synth.folder import ImageOptions, blender_assets

    return blender_assets(ImageOptions(base_scene_blendfile=args.base_scene_blendfile, shape_dir=args.shape_dir,
                                       material_dir=args.material_dir), WorldOptions())


class BlenderDrawer:
    def __init__(self, executable: str, samples: int, assets: tuple | None = None):
        from builder_utils.clevr.synth.blender import BlenderRenderer, BlenderSettings, find_blender

        self.renderer = BlenderRenderer(find_blender(executable), BlenderSettings(samples=samples, assets=assets))
        self.cpu = 0.0

    def __call__(self, scene: dict, camera, path: Path) -> None:
        from builder_utils.clevr.synth.blender import still_studio

        self.renderer.render({**scene, "_studio": still_studio(camera.location)}, path)

    def close(self) -> None:
        self.renderer.close()


def run(renderer: str, pairs, out: Path, args) -> list[dict]:
    assets = asset_files(args) if renderer == "blender" else None
    folder = out / (renderer if renderer == "pillow" else f"blender-{args.samples}" + ("-clevr-assets" if assets else ""))
    folder.mkdir(parents=True, exist_ok=True)
    draw = render_pillow if renderer == "pillow" else None
    rows = []
    rendered = 0
    try:
        for scene, theirs in pairs:
            path = folder / scene["image_filename"]
            camera, fit_error = fitted_camera(scene)
            if not path.is_file() or args.again:
                if draw is None:
                    draw = BlenderDrawer(args.blender, args.samples, assets)
                draw(scene, camera, path)
                rendered += 1
            ours = np.asarray(Image.open(path).convert("RGB"))
            rows.append({"scene": scene["image_filename"], "fit_px": fit_error, **measures(ours, theirs, scene)})
    finally:
        if isinstance(draw, BlenderDrawer):
            draw.close()
            # the Blender process's own CPU time (start-up included), once it has exited
            cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
            print(f"{renderer}: {(cpu.ru_utime + cpu.ru_stime) / max(rendered, 1):.2f} CPU-s per image "
                  f"({rendered} rendered)", file=sys.stderr)
    return rows


def cleanliness(pairs, out: Path, args) -> str:
    """PSNR of the default-sample image against a 64-sample one inside each object's mask (from
    the object-index pass), small and large objects apart: the whole image hides small objects."""
    from builder_utils.clevr.synth.blender import BlenderRenderer, BlenderSettings, find_blender, still_studio

    per_size: dict[str, list[float]] = {"small": [], "large": []}
    folders = {n: out / f"blender-{n}" for n in (args.samples, REFERENCE_SAMPLES)}
    for samples, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        with BlenderRenderer(find_blender(args.blender), BlenderSettings(samples=samples)) as renderer:
            for scene, _ in pairs:
                if not (folder / scene["image_filename"]).is_file():
                    camera, _ = fitted_camera(scene)
                    renderer.render({**scene, "_studio": still_studio(camera.location)}, folder / scene["image_filename"])
    with BlenderRenderer(find_blender(args.blender), BlenderSettings(samples=1)) as renderer:
        for scene, _ in pairs:
            camera, _ = fitted_camera(scene)
            labels, _ = renderer.index_map(scene, still_studio(camera.location), out)
            images = [np.asarray(Image.open(f / scene["image_filename"]).convert("RGB")).astype(np.float64)
                      for f in folders.values()]
            for k, obj in enumerate(scene["objects"]):
                mask = labels == k + 1
                if mask.sum() >= 20:
                    mse = float(np.mean((images[0][mask] - images[1][mask]) ** 2))
                    per_size[obj["size"]].append(10 * np.log10(255.0 ** 2 / max(mse, 1e-12)))
    return "\n".join(f"{args.samples} samples against {REFERENCE_SAMPLES}, inside {size} objects' masks: "
                     f"{np.mean(v):.1f} dB mean, {np.min(v):.1f} worst ({len(v)} objects)"
                     for size, v in per_size.items() if v)


def table(results: dict[str, list[dict]]) -> str:
    names = list(results)
    lines = ["| measure, mean over {} scenes | {} |".format(len(next(iter(results.values()))), " | ".join(names)),
             "|---|" + "---|" * len(names)]
    for key, label, fmt in (("psnr", "PSNR of the whole image (dB; worst)", "{:.1f} ({:.1f})"),
                            ("brightness", "mean brightness, ours / CLEVR's", "{:.3f}"),
                            ("colour", "colour at pixel_coords, 5x5 patch, mean abs. diff. (/255)", "{:.1f}"),
                            ("floor", "floor in front, bottom 16 rows, mean abs. diff. (/255)", "{:.1f}")):
        cells = []
        for name in names:
            values = [r[key] for r in results[name]]
            cells.append(fmt.format(np.mean(values), np.min(values)) if key == "psnr" else fmt.format(np.mean(values)))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renderer", nargs="+", choices=("pillow", "blender"), default=["pillow"])
    parser.add_argument("--blender", default=None, help="Blender executable or Python with bpy")
    parser.add_argument("--samples", type=int, default=None, help="Blender samples (default: the renderer's)")
    parser.add_argument("--scenes", type=int, default=None, help="the first N official scenes (default: all)")
    parser.add_argument("--official", type=Path, default=OFFICIAL)
    parser.add_argument("--out", type=Path, default=None, help="keep the renders here (and reuse them)")
    parser.add_argument("--again", action="store_true", help="render even where --out has an image")
    parser.add_argument("--clean", action="store_true",
                        help="also: the default samples against 64 inside small and large objects' masks")
    parser.add_argument("--per-scene", action="store_true", help="print each scene's measures")
    for flag, what in (("--base_scene_blendfile", "CLEVR's base_scene.blend"), ("--shape_dir", "CLEVR's shapes folder"),
                       ("--material_dir", "CLEVR's materials folder")):
        parser.add_argument(flag, default=None, help=f"{what} (Blender only; default: the studio built in code)")
    args = parser.parse_args()
    if args.samples is None:
        from builder_utils.clevr.synth.blender import DEFAULT_SAMPLES

        args.samples = DEFAULT_SAMPLES
    pairs = official(args.official, args.scenes)
    out = args.out or Path(tempfile.mkdtemp(prefix="fidelity-"))
    results = {}
    for renderer in args.renderer:
        started = time.perf_counter()
        rows = run(renderer, pairs, out, args)
        name = renderer if renderer == "pillow" else f"blender ({args.samples} samples" + (
            ", CLEVR's asset files)" if asset_files(args) else ")")
        results[name] = rows
        print(f"{name}: {len(rows)} scenes in {time.perf_counter() - started:.1f} s; camera fit "
              f"{np.mean([r['fit_px'] for r in rows]):.2f} px mean, {max(r['fit_px'] for r in rows):.2f} worst",
              file=sys.stderr)
        if args.per_scene:
            for r in rows:
                print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in r.items()}))
    print(table(results))
    if args.clean:
        print(cleanliness(pairs, out, args))
    print(f"renders in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
