"""What a re-run of ``clevr-math synth`` may do to a world already there, decided split by split.

A world's splits are told apart by their scene files' ``info`` (seed, count, every control,
renderer settings): the same ``info`` is the same world, so the run resumes it or does nothing;
another ``info`` is another world, refused without ``--overwrite`` in one line naming what would
go; a split the run does not name is left as it is, byte for byte. A CLEVR folder that this
command did not write (real CLEVR) is never written into.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from builder_utils.ownership import Entry, OwnershipError

__all__ = ["SplitPlan", "plan_splits", "read_info", "refuse_foreign_clevr", "split_files"]

# our scene files start with the info block: the first bytes hold it whatever the world's size
_HEAD = 1 << 16
_PREFIX = '{"info": '


@dataclass
class SplitPlan:
    """One split of a run: ``action`` ``"write"`` (new or resumed), ``"replace"`` (another world,
    with ``--overwrite``) or ``"skip"`` (the same world, complete); ``stale``: our files of the
    split that the run removes."""

    split: str
    info: dict
    files: list[str]
    action: str = "write"
    stale: list[str] = field(default_factory=list)


def read_info(path: str | os.PathLike) -> dict | None:
    """The ``info`` block at the head of a scene file written by this command (None: unreadable or other).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "s.json"
        >>> _ = path.write_text('{"info": {"split": "val", "seed": 1}, "scenes": []}')
        >>> read_info(path)
        {'split': 'val', 'seed': 1}
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD).decode("utf-8", "replace")
    except OSError:
        return None
    if not head.startswith(_PREFIX):
        return None
    try:
        info, _ = json.JSONDecoder().raw_decode(head, len(_PREFIX))
    except ValueError:
        return None
    return info if isinstance(info, dict) else None


def split_files(record: Mapping[str, Entry], split: str, command: str) -> list[str]:
    """The files of ``split`` that ``command`` wrote, as the folder's record lists them.

    Example:
        >>> record = {p: Entry(p, 1, "0" * 64, "clevr-math synth") for p in
        ...           ("scenes/CLEVR_val_scenes.json", "images/val/CLEVR_val_000000.png", "images/train/x.png")}
        >>> split_files(record, "val", "clevr-math synth")
        ['images/val/CLEVR_val_000000.png', 'scenes/CLEVR_val_scenes.json']
    """
    scene_file = f"scenes/CLEVR_{split}_scenes.json"
    folders = (f"images/{split}/", f"blendfiles/{split}/")
    return sorted(path for path, entry in record.items()
                  if entry.command == command and (path == scene_file or path.startswith(folders)))


def _intact(root: Path, entries: list[Entry]) -> bool:
    # type and size only: a complete world of 70,000 images is checked in a second, not hashed again
    for entry in entries:
        try:
            stat = os.lstat(root / entry.path)
        except OSError:
            return False
        if not os.path.isfile(root / entry.path) or os.path.islink(root / entry.path) or stat.st_size != entry.size:
            return False
    return True


def _differences(old: dict | None, new: dict) -> str:
    if old is None:
        return "its scene file does not say how it was made"
    changed = []
    for key in sorted(set(old) | set(new)):
        if key in ("controls", "images") and isinstance(old.get(key), dict) and isinstance(new.get(key), dict):
            inner = old[key], new[key]
            changed += [f"{name} {inner[0].get(name)!r} -> {inner[1].get(name)!r}"
                        for name in sorted(set(inner[0]) | set(inner[1])) if inner[0].get(name) != inner[1].get(name)]
        elif old.get(key) != new.get(key):
            changed.append(f"{key} {old.get(key)!r} -> {new.get(key)!r}" if key != "shape_color_rule" else
                           "the shape-colour rule")
    return ", ".join(changed[:4]) + (f" and {len(changed) - 4} more" if len(changed) > 4 else "")


def _what_goes(paths: list[str], split: str) -> str:
    images = sum(1 for p in paths if p.startswith("images/"))
    blends = sum(1 for p in paths if p.startswith("blendfiles/"))
    parts = [f"{images} {split} image(s)"] if images else []
    parts += [f"{blends} Blender file(s)"] if blends else []
    parts += ["their scene file" if parts else f"the {split} scene file"] if any(
        p.startswith("scenes/") for p in paths) else []
    return " and ".join(parts) or f"the {split} files"


def plan_splits(root: Path, record: Mapping[str, Entry], wanted: Mapping[str, tuple[dict, list[str]]],
                overwrite: bool, command: str) -> list[SplitPlan]:
    """A :class:`SplitPlan` per split of ``wanted`` (split -> (the info it would write, its files)).

    Refuses (:class:`OwnershipError`, one line) a split made with other arguments, unless ``overwrite``.

    Example:
        >>> import tempfile
        >>> from builder_utils.clevr.synth import write_clevr_folder
        >>> from builder_utils.ownership import read_record
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"val": 1}, seed=0, progress=False)
        >>> record, _ = read_record(root)
        >>> info = read_info(root / "scenes" / "CLEVR_val_scenes.json")
        >>> [plan.action for plan in plan_splits(root, record, {"val": (info, sorted(record)),
        ...                                                    "test": ({}, [])}, False, "clevr-math synth")]
        ['skip', 'write']
        >>> plan_splits(root, record, {"val": ({**info, "seed": 1}, [])}, False, "clevr-math synth")
        Traceback (most recent call last):
        ...
        builder_utils.ownership.OwnershipError: ...: its val split was made with other arguments (seed 0 -> 1); this run would replace 1 val image(s) and their scene file. Nothing was changed: pass --overwrite to replace them, or give another --out
    """
    plans = []
    for split, (info, files) in wanted.items():
        ours = split_files(record, split, command)
        plan = SplitPlan(split, info, files)
        if ours:
            scene_file = f"scenes/CLEVR_{split}_scenes.json"
            old = read_info(root / scene_file) if scene_file in ours else None
            planned = set(files)
            if old == info:
                complete = planned <= set(ours) and _intact(root, [record[p] for p in files])
                plan.action = "skip" if complete else "write"
            elif not overwrite:
                raise OwnershipError(
                    f"{root}: its {split} split was made with other arguments ({_differences(old, info)}); this run "
                    f"would replace {_what_goes(ours, split)}. Nothing was changed: pass --overwrite to replace "
                    f"them, or give another --out")
            else:
                plan.action = "replace"
            plan.stale = [p for p in ours if p not in planned]
        plans.append(plan)
    return plans


def refuse_foreign_clevr(root: Path, record: Mapping[str, Entry]) -> None:
    """Refuse (one line, whatever ``--overwrite``) a folder holding CLEVR files this command did not write.

    Real CLEVR (or any folder the user made) is never written into: a split it lacks goes to a
    folder of its own, which the builder takes as ``test_data_dir``.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "scenes").mkdir()
        >>> _ = (root / "scenes" / "CLEVR_val_scenes.json").write_text("{}")
        >>> refuse_foreign_clevr(root, {})
        Traceback (most recent call last):
        ...
        builder_utils.ownership.OwnershipError: ...: a CLEVR folder that clevr-math synth did not write (scenes/CLEVR_val_scenes.json); ...
    """
    found = None
    scenes = root / "scenes"
    if scenes.is_dir() and not scenes.is_symlink():
        found = next((f"scenes/{p.name}" for p in sorted(scenes.glob("*_scenes.json"))
                      if f"scenes/{p.name}" not in record), None)
    images = root / "images"
    if found is None and images.is_dir() and not images.is_symlink():
        for folder in sorted(p for p in images.iterdir() if p.is_dir() and not p.is_symlink()):
            if any(path.startswith(f"images/{folder.name}/") for path in record):
                continue  # our split's folder: a file of the user's beside our images is kept, not a world
            with os.scandir(folder) as entries:
                first = next((e.name for e in entries if e.name.endswith(".png") and e.is_file(follow_symlinks=False)
                              and f"images/{folder.name}/{e.name}" not in record), None)
            if first is not None:
                found = f"images/{folder.name}/{first}"
                break
    if found is not None:
        raise OwnershipError(
            f"{root}: a CLEVR folder that clevr-math synth did not write ({found}); it is never written into, with or "
            "without --overwrite. Write the new split into a folder of its own (--out NEW) and give it to the builder "
            "as test_data_dir=NEW")
