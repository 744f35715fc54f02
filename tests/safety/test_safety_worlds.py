"""Safety rows of issue 36: a re-run of `clevr-math synth` never loses a world.

A second run with other arguments refuses and changes nothing; a missing split is added with
every other file kept byte for byte; a CLEVR folder the user made is never written into, with or
without --overwrite; a kill -9 in the middle of adding a split leaves the other splits as they were.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from safety_harness import Case, kill_at, run_case

from builder_utils.clevr.synth import write_clevr_folder


def _world(tmp: Path) -> Path:
    return write_clevr_folder(tmp / "W", {"train": 6, "val": 6}, seed=0, progress=False)


def _user_clevr(tmp: Path) -> Path:
    # a CLEVR folder as the user unpacked it (no record of ours): the bytes of a world, moved
    made = write_clevr_folder(tmp / "made", {"val": 2}, seed=0, progress=False)
    real = tmp / "CLEVR_v1.0"
    for path in sorted(made.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            target = real / path.relative_to(made)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
    return real


def _synth(tmp: Path, *extra: str) -> list[str]:
    return ["clevr-math", "synth", "--out", str(tmp / "W"), "--quiet", *extra]


def _kill_then_add(tmp: Path) -> list[str]:
    _world(tmp)
    kill_at(tmp, _synth(tmp, "--num_scenes", "test=4", "--cogent", "A"))  # staged, nothing moved
    return _synth(tmp, "--num_scenes", "test=4", "--cogent", "A")


def _test_split_added(tmp: Path, done) -> None:
    assert sorted(p.name for p in (tmp / "W" / "images" / "test").iterdir()) == \
        [f"CLEVR_test_{k:06d}.png" for k in range(4)]


WORLD = ["W/images/train/*", "W/images/val/*", "W/scenes/*"]

CASES = [
    Case("synth into a world with another count of one split refuses and changes nothing",
         setup=lambda tmp: (_world(tmp), _synth(tmp, "--num_scenes", "2", "--splits", "val"))[1],
         exit_code=2, stderr_has="would replace 6 val image(s) and their scene file", protected=["W/**", "W/.*"]),
    Case("synth into a world with another seed refuses and changes nothing",
         setup=lambda tmp: (_world(tmp), _synth(tmp, "--num_scenes", "6", "--seed", "3"))[1],
         exit_code=2, stderr_has="seed 0 -> 3", protected=["W/**", "W/.*"]),
    Case("synth into a world with a control changed (--cogent A) refuses and changes nothing",
         setup=lambda tmp: (_world(tmp), _synth(tmp, "--num_scenes", "6", "--cogent", "A"))[1],
         exit_code=2, stderr_has="the shape-colour rule", protected=["W/**", "W/.*"]),
    Case("synth adds a missing split and keeps every other file byte for byte",
         setup=lambda tmp: (_world(tmp), _synth(tmp, "--num_scenes", "test=4", "--cogent", "B"))[1],
         exit_code=0, protected=WORLD, check=_test_split_added),
    Case("synth --overwrite of one split keeps the other split byte for byte",
         setup=lambda tmp: (_world(tmp), _synth(tmp, "--num_scenes", "val=2", "--overwrite"))[1],
         exit_code=0, protected=["W/images/train/*", "W/scenes/CLEVR_train_scenes.json"]),
    Case("synth kill -9 while adding a split, then the re-run: the other splits kept",
         setup=_kill_then_add, exit_code=0, protected=WORLD, check=_test_split_added, timeout=180),
    *[Case(f"synth of a new split into the user's CLEVR folder{' --overwrite' if flag else ''} is refused",
           setup=lambda tmp, flag=flag: (_user_clevr(tmp), ["clevr-math", "synth", "--out", str(tmp / "CLEVR_v1.0"),
                                                             "--num_scenes", "test=2", "--quiet", *flag])[1],
           exit_code=2, stderr_has="never written into", protected=["CLEVR_v1.0/**"])
      for flag in ([], ["--overwrite"])],
]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_world_safety(case, tmp_path):
    run_case(case, tmp_path)
