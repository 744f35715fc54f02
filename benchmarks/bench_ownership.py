"""Overhead of the ownership record (issue 20) at full size: synth's 70,000 PNGs, a 3 GB export.

Run: .venv/bin/python benchmarks/bench_ownership.py [--scenes 2000] [--files 70000] [--clips 1800 --seconds 20]

What the record costs is :meth:`builder_utils.ownership.OutputFolder.commit` (the sha256 of
every new file, the pending record, the moves into place, the final record) plus opening the
folder (lock, takeover, reading the record); both are timed by wrapping them, inside real runs:

1. synth: ``write_clevr_folder`` of ``--scenes`` rendered train scenes (whole wall time, and
   the record's share); then the record alone over ``--files`` real PNGs (the rendered ones,
   copied in turn to 70,000 names: rendering 70,000 would take most of an hour here), against
   the projected synth time of that many scenes;
2. export: ``clotho-aqa synth`` of ``--clips`` clips of ``--seconds`` s (about 3.2 GB of WAV),
   then ``export_builder`` of the ``questions`` + ``clips`` configurations (``--media shared``:
   3 GB of Parquet), whole wall time and the record's share.

Wall clock (the work is I/O as much as CPU); the ratios are what to read on a shared machine.
"""
import argparse
import shutil
import tempfile
import time
from pathlib import Path

from builder_utils.ownership import OutputFolder, sha256_of

spent = {"commit": 0.0, "open": 0.0}


def _timed(name, function):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] += time.perf_counter() - started
    return wrapper


OutputFolder._commit = _timed("commit", OutputFolder._commit)
OutputFolder._open = _timed("open", OutputFolder._open)


def _record_seconds() -> float:
    total = spent["commit"] + spent["open"]
    spent.update(commit=0.0, open=0.0)
    return total


def synth(root: Path, scenes: int, files: int) -> None:
    from builder_utils.clevr.synth import write_clevr_folder

    _record_seconds()
    started = time.perf_counter()
    world = write_clevr_folder(root / "world", {"train": scenes}, seed=0, progress=False)
    whole = time.perf_counter() - started
    record = _record_seconds()
    print(f"synth {scenes:,} scenes: {whole:.1f} s, record {record:.2f} s ({record / whole:.1%})")
    pngs = sorted((world / "images" / "train").iterdir())
    with OutputFolder.open(root / "big", command="bench") as out:
        (out.stage / "images").mkdir()
        for k in range(files):
            shutil.copyfile(pngs[k % len(pngs)], out.stage / "images" / f"CLEVR_train_{k:06d}.png")
        _record_seconds()
        out.add([f"images/CLEVR_train_{k:06d}.png" for k in range(files)])
    record = _record_seconds()
    size = sum(p.stat().st_size for p in pngs) / len(pngs)
    projected = (whole - spent["commit"]) / scenes * files
    print(f"record over {files:,} real PNGs (mean {size / 1024:.1f} KiB): {record:.1f} s; synth of {files:,} scenes "
          f"projected at the rate above: {projected:.0f} s; overhead {record / (projected + record):.1%}")
    shutil.rmtree(root / "big")


def export(root: Path, clips: int, seconds: float) -> None:
    from builder_utils.hub import export_builder
    from clotho_aqa import ClothoAQA
    from clotho_aqa.synth import write_synthetic_release

    release = write_synthetic_release(root / "release", num_files=clips, seed=0, duration=seconds).root
    media = sum(p.stat().st_size for p in (release / "audio_files").iterdir())
    _record_seconds()
    started = time.perf_counter()
    export_builder(ClothoAQA, root / "hub", card_template="clotho_aqa", data_dir=release,
                   configs=["questions"], media="shared", cache_dir=root / "cache", progress=False)
    whole = time.perf_counter() - started
    record = _record_seconds()
    written = sum(p.stat().st_size for p in (root / "hub").rglob("*") if p.is_file())
    print(f"export {written / 1e9:.2f} GB (media {media / 1e9:.2f} GB): {whole:.1f} s, record {record:.2f} s "
          f"({record / whole:.1%})")
    # The shards' sha256 is taken by the shard writer's threads while they write (and handed to
    # the commit); hashing the 3 GB again, alone, bounds what the record's hashing can cost.
    started = time.perf_counter()
    for path in sorted((root / "hub").rglob("*.parquet")):
        sha256_of(path)
    hashing = time.perf_counter() - started
    print(f"sha256 of the {written / 1e9:.2f} GB written, alone: {hashing:.1f} s ({hashing / whole:.1%} of the export; "
          "an upper bound: the writer hashes while writing)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=2000)
    parser.add_argument("--files", type=int, default=70_000)
    parser.add_argument("--clips", type=int, default=1800)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--only", choices=("synth", "export"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=".") as scratch:
        if args.only != "export":
            synth(Path(scratch), args.scenes, args.files)
        if args.only != "synth":
            export(Path(scratch), args.clips, args.seconds)


if __name__ == "__main__":
    main()
