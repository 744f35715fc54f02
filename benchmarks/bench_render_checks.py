"""Cost of the Blender driver's check of each image (issue 37): every chunk's CRC, a full decode at
the expected size and the sha256 of the bytes, per 480x320 PNG, against the seconds Blender takes
to render one (BENCHMARKS.md, "Blender renderer").

Run: .venv/bin/python benchmarks/bench_render_checks.py ../shared/data/clevr/official_renders/images [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from builder_utils.clevr.synth.blender import BlenderSettings, _complete_png


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help="a folder of 480x320 PNGs (CLEVR's official renders)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    images = sorted(Path(args.folder).glob("*.png"))
    settings = BlenderSettings()
    sizes = [p.stat().st_size for p in images]
    best = float("inf")
    for _ in range(args.repeats):
        started = time.process_time()
        for path in images:
            _complete_png(path, settings)
        best = min(best, time.process_time() - started)
    print(f"{len(images)} PNGs, mean {sum(sizes) / len(sizes) / 1024:.0f} KiB: "
          f"{best / len(images) * 1000:.2f} CPU-ms per image (best of {args.repeats})")


if __name__ == "__main__":
    main()
