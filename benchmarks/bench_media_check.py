"""Cost of the build-time media checks (``builder_utils.media_check``): PNGs and WAVs per second.

PNGs: ``--pngs`` synthetic CLEVR renders (a few prototypes hard-linked under every name, as in
``bench_build.py``), checked by :func:`clevr_math.clevr_folder.check_images` (existence, then
Pillow open + verify in threads). WAVs: ``--wavs`` clips of ``--seconds`` s at 44.1 kHz mono
(copies, so the files are distinct), checked by :func:`clotho_aqa.release.check_clips`.
The files are in the page cache (just written): the figure is the CPU cost, not cold-disk reads.

    python benchmarks/bench_media_check.py --pngs 70000 --wavs 2000
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

import numpy as np
import soundfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pngs", type=int, default=70_000)
    parser.add_argument("--wavs", type=int, default=2_000)
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()

    from builder_utils.clevr.synth import write_clevr_folder
    from clevr_math.clevr_folder import SplitSource, check_images
    from clotho_aqa.release import check_clips

    work = tempfile.mkdtemp(prefix="bench_media_")
    try:
        write_clevr_folder(os.path.join(work, "proto"), 4, 0, splits=("val",), progress=False)
        protos = sorted(os.listdir(os.path.join(work, "proto", "images", "val")))
        images = os.path.join(work, "images")
        os.makedirs(images)
        scenes = []
        for k in range(args.pngs):
            name = f"CLEVR_train_{k:06d}.png"
            os.link(os.path.join(work, "proto", "images", "val", protos[k % len(protos)]), os.path.join(images, name))
            scenes.append({"image_filename": name})
        started, cpu = time.perf_counter(), time.process_time()
        check_images(SplitSource("train", "train", "scenes.json", images), scenes)
        png_s, png_cpu = time.perf_counter() - started, time.process_time() - cpu

        audio = os.path.join(work, "audio")
        os.makedirs(audio)
        first = os.path.join(audio, "clip_0.wav")
        soundfile.write(first, np.zeros(int(44_100 * args.seconds), dtype=np.float32), 44_100, subtype="PCM_16")
        clips = {"clip_0.wav": first}
        for k in range(1, args.wavs):
            clips[f"clip_{k}.wav"] = shutil.copy(first, os.path.join(audio, f"clip_{k}.wav"))
        started, cpu = time.perf_counter(), time.process_time()
        check_clips({name: path for name, path in clips.items()})
        wav_s, wav_cpu = time.perf_counter() - started, time.process_time() - cpu
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # process CPU time (every checking thread counted): what the checks cost, whatever the load
    print(f"| PNG (check_images) | {args.pngs:,} | {png_s:.1f} | {png_cpu:.1f} | {args.pngs / png_cpu:,.0f} |")
    print(f"| WAV (check_clips, {args.seconds:g} s clips) | {args.wavs:,} | {wav_s:.2f} | {wav_cpu:.2f} | "
          f"{args.wavs / wav_cpu:,.0f} |")
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
