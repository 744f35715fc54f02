"""Finding the splits of a CLEVR_v1.0-shaped folder and the images its scenes name (README, "Data").

A test split exists only with ``scenes/CLEVR_test_scenes.json``: CLEVR never released its test scenes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from builder_utils.checksums import read_checksums
from builder_utils.media_check import MediaError, check_all, check_png

# (Hugging Face split name, CLEVR split name); train and validation are required.
SPLITS: tuple[tuple[str, str], ...] = (("train", "train"), ("validation", "val"), ("test", "test"))
REQUIRED_SPLITS = ("train", "val")

CHECKSUMS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checksums.tsv")
CLEVR_ZIP = read_checksums(CHECKSUMS_FILE)["https://dl.fbaipublicfiles.com/clevr/CLEVR_v1.0.zip"]

# How to get data, repeated in every "no data" error so the user never has to search.
DATA_OPTIONS = (
    "Options: (1) data_dir=<folder in the CLEVR_v1.0 layout: scenes/CLEVR_train_scenes.json, "
    "scenes/CLEVR_val_scenes.json, images/train/, images/val/, optionally scenes/CLEVR_test_scenes.json "
    f"and images/test/>; (2) no data_dir and network access, to download the official {CLEVR_ZIP.url} "
    "(19 GB); (3) a synthetic CLEVR world: `clevr-math synth --out DIR --splits train,val,test` then "
    "data_dir=DIR, or `clevr-math demo` to see the whole pipeline offline."
)


class ClevrDataError(FileNotFoundError):
    """Input data is missing or not in the expected layout; the message names the path."""


@dataclass(frozen=True)
class SplitSource:
    """Where one split's scenes and images live.

    Example:
        >>> SplitSource("validation", "val", "/d/scenes/CLEVR_val_scenes.json", "/d/images/val").clevr_split
        'val'
    """

    hf_split: str
    clevr_split: str
    scenes_path: str
    images_dir: str


def clevr_root(path: str) -> str:
    """The CLEVR_v1.0 folder itself, given it or its parent (what extracting the zip gives).

    Example:
        >>> clevr_root("/nonexistent/CLEVR_v1.0")
        '/nonexistent/CLEVR_v1.0'
    """
    nested = os.path.join(path, "CLEVR_v1.0")
    if not os.path.isdir(os.path.join(path, "scenes")) and os.path.isdir(nested):
        return nested
    return path


def find_splits(root: str) -> list[SplitSource]:
    """The splits present under ``root`` (train and validation required, test optional).

    Example:
        >>> import os, tempfile; from builder_utils.clevr.synth import write_clevr_folder
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"train": 1, "val": 1}, seed=0, progress=False)
        >>> [s.hf_split for s in find_splits(root)]          # no test scenes: no test split
        ['train', 'validation']
        >>> os.remove(root / "scenes" / "CLEVR_val_scenes.json")
        >>> find_splits(root)
        Traceback (most recent call last):
        ...
        clevr_math.clevr_folder.ClevrDataError: .../CLEVR_val_scenes.json: scene file not found (the validation split needs it). ...
    """
    sources = []
    for hf_split, clevr_split in SPLITS:
        if clevr_split in REQUIRED_SPLITS or os.path.isfile(os.path.join(root, "scenes", f"CLEVR_{clevr_split}_scenes.json")):
            sources.append(split_source(root, clevr_split))
    return sources


def split_source(root: str, clevr_split: str, options: str = DATA_OPTIONS) -> SplitSource:
    """One split's scene file and image folder under ``root``, checked; no other split's file is looked at.
    ``options``: how to get data, in the caller's words, ending each "not found" error.

    Example:
        >>> split_source("/nonexistent", "val", "Options: none.")
        Traceback (most recent call last):
        ...
        clevr_math.clevr_folder.ClevrDataError: CLEVR data folder /nonexistent does not exist. Options: none.
    """
    hf_split = {clevr: hf for hf, clevr in SPLITS}[clevr_split]
    if not os.path.isdir(root):
        raise ClevrDataError(f"CLEVR data folder {root} does not exist. {options}")
    scenes = os.path.join(root, "scenes", f"CLEVR_{clevr_split}_scenes.json")
    images = os.path.join(root, "images", clevr_split)
    if not os.path.isfile(scenes):
        raise ClevrDataError(f"{scenes}: scene file not found (the {hf_split} split needs it). {options}")
    if not os.path.isdir(images):
        raise ClevrDataError(f"{images}: image folder not found (the scenes of {scenes} name images in it)")
    return SplitSource(hf_split, clevr_split, scenes, images)


def separate_test_split(folder: str) -> SplitSource:
    """The test split of a folder holding only ``scenes/CLEVR_test_scenes.json`` and ``images/test/``
    (the builder's ``test_data_dir``: a test world rendered apart, e.g. by ``clevr-math synth --splits test``).

    Example:
        >>> import tempfile; from builder_utils.clevr.synth import write_clevr_folder
        >>> root = write_clevr_folder(tempfile.mkdtemp(), {"test": 1}, seed=0, progress=False)
        >>> separate_test_split(str(root)).hf_split
        'test'
    """
    root = clevr_root(os.path.abspath(os.path.expanduser(folder)))
    scenes = os.path.join(root, "scenes", "CLEVR_test_scenes.json")
    images = os.path.join(root, "images", "test")
    if not os.path.isfile(scenes):
        raise ClevrDataError(f"test_data_dir {folder}: no {scenes}; write a test world with `clevr-math synth --out "
                             f"{folder} --num_scenes test=1000` (add --renderer blender for CLEVR's look)")
    if not os.path.isdir(images):
        raise ClevrDataError(f"{images}: image folder not found (the scenes of {scenes} name images in it)")
    return SplitSource("test", "test", scenes, images)


def image_path(source: SplitSource, image_filename: str, where: str) -> str:
    """The image file of one scene; :class:`ClevrDataError` naming the file and ``where`` if absent.

    A name that would leave the split's image folder is refused (scene files are untrusted).

    Example:
        >>> image_path(SplitSource("train", "train", "s.json", "/no"), "CLEVR_train_000000.png", "s.json: scene 0")
        Traceback (most recent call last):
        ...
        clevr_math.clevr_folder.ClevrDataError: s.json: scene 0: image /no/CLEVR_train_000000.png not found
    """
    if os.path.basename(image_filename) != image_filename or image_filename in ("", ".", ".."):
        raise ClevrDataError(f"{where}: image_filename {image_filename!r} must be a plain file name")
    path = os.path.join(source.images_dir, image_filename)
    if not os.path.isfile(path):
        raise ClevrDataError(f"{where}: image {path} not found")
    return path


def check_images(source: SplitSource, scenes, origin: str | None = None, item: str = "scene") -> None:
    """Every scene's image exists and is a whole PNG, else an error naming the file and its scene.

    Run before generating, so the error is not wrapped in a generation error from a worker.

    Example:
        >>> check_images(SplitSource("val", "val", "s.json", "/nonexistent"), [])
        Traceback (most recent call last):
        ...
        clevr_math.clevr_folder.ClevrDataError: /nonexistent: image folder not found (the scenes of s.json name images in it)
    """
    origin = origin or source.scenes_path
    if not os.path.isdir(source.images_dir):
        raise ClevrDataError(f"{source.images_dir}: image folder not found (the scenes of {origin} name images in it)")
    with os.scandir(source.images_dir) as entries:
        kinds = {entry.name: entry.is_file() for entry in entries}
    names = [scene["image_filename"] for scene in scenes]
    missing = [(i, name) for i, name in enumerate(names) if not kinds.get(name)]
    if missing:
        position, name = missing[0]
        path = os.path.join(source.images_dir, name)
        what = "is a folder, not an image file" if name in kinds else "not found"
        raise ClevrDataError(
            f"{origin}: {item} {position} ({name}): image {path} {what} "
            f"({len(missing)} of {len(scenes)} images of this split are missing or not files)"
        )
    paths = [os.path.join(source.images_dir, name) for name in names]
    try:
        check_all(list(dict.fromkeys(paths)), check_png)  # released files name an image once per question
    except MediaError as exc:
        position = paths.index(exc.path)
        raise MediaError(exc.path, f"{exc.problem} (the image of {item} {position} of {origin})") from None
