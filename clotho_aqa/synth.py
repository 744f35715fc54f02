"""A small synthetic Clotho-AQA release in the official layout, for tests and the demo (our own questions).

Formats as Zenodo record 6473207's, one WAV more than the CSVs use; ``quirks=True`` adds the official quirks.
"""

from __future__ import annotations

import csv
import errno
import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile

from builder_utils.options import MAX_SEED, Integer
from builder_utils.ownership import OutputFolder
from clotho_aqa.options import MAX_FILES, duration_seconds
from clotho_aqa.release import AUDIO_DIR, METADATA_COLUMNS, METADATA_CSV, QA_COLUMNS, SAMPLING_RATE, SPLIT_CSVS

OWNER = "clotho-aqa synth"
LICENSES = ("CC0", "CC-BY-3.0", "CC-BY-NC-3.0", "Sampling+ 1.0")

_PLACES = ("harbour", "kitchen", "forest", "station", "market", "garden", "tunnel", "stairwell", "beach", "workshop")
_SOURCES = ("gulls", "kettle", "footsteps", "rain", "traffic", "bells", "crickets", "drill", "waves", "voices")
_THINGS = ("a dog", "running water", "a car engine", "birdsong", "a door closing", "wind", "music", "a bell", "thunder", "people talking")
_YES_NO = (
    "Can you hear {} in this clip?",
    "Is {} audible at any point?",
    "Does the recording contain {}?",
    "Would a listener notice {}, even briefly?",
)
_SINGLE_WORD = (
    "What is making the loudest sound?",
    "How many distinct sounds can be counted?",
    "Where could this have been recorded?",
    "What material is being struck?",
)
_WORDS = ("water", "rain", "birds", "engine", "wind", "dog", "one", "two", "three", "metal", "street", "wood", "bell", "people")
# Our own sentence with the kind of mojibake the official train table carries; a build must
# keep it byte for byte (the release is read as UTF-8, never re-decoded).
MOJIBAKE_QUESTION = "What gadget makes these beeps in a clichМ©d film scene?"
DUPLICATED_QUESTION = "Is there running water?"


@dataclass(frozen=True)
class SyntheticRelease:
    """What :func:`write_synthetic_release` wrote: the folder and the expected sizes.

    Example:
        >>> import os, tempfile
        >>> rel = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "rel"), num_files=5, seed=0)
        >>> rel.num_rows["train"], rel.num_questions["train"]
        (54, 18)
    """

    root: Path
    files: dict[str, list[str]]  # split -> clip names as written in the QA CSV
    num_rows: dict[str, int]
    num_questions: dict[str, int]
    quirk_names: dict[str, str]  # quirk -> clip name in the CSV


def _split_sizes(num_files: int) -> dict[str, int]:
    validation = max(1, round(num_files * 0.2))
    test = max(1, round(num_files * 0.2))
    return {"train": num_files - validation - test, "validation": validation, "test": test}


def _clip_names(num_files: int, num_train: int, rng: random.Random, quirks: bool) -> tuple[list[str], dict[str, str], dict[str, str]]:
    """(CSV names, CSV name -> disk name, quirk -> CSV name)."""
    names: list[str] = []
    while len(names) < num_files:
        name = f"{rng.choice(_SOURCES).title()} at the {rng.choice(_PLACES)} {len(names):02d}.wav"
        names.append(name)
    quirk_names: dict[str, str] = {}
    if quirks:
        # Train clips carry the spelling quirks (the train table is where the release has them).
        specials = {
            "apostrophe_entity": "Kids&#39; choir rehearsal.wav",
            "ampersand_entity": "Rain&amp;Thunder on tin roof.wav",
            "underscore_for_dot": "tin_can_da_nce.wav",
            "metadata_underscore": "Ferry horn (Pier&#39;s end) 07.15 02.03.wav",
        }
        for slot, (quirk, name) in enumerate(specials.items()):
            if slot < num_train:
                names[slot] = name
                quirk_names[quirk] = name
    on_disk = {n: n for n in names}
    if "underscore_for_dot" in quirk_names:
        on_disk["tin_can_da_nce.wav"] = "tin_can_da.nce.wav"
    return names, on_disk, quirk_names


def _answers(rng: random.Random, pool: list[str], kind: str, style: int) -> list[str]:
    """Three annotator answers: style 0 unanimous, 1 two agree, 2 all differ (single-word only)."""
    if kind == "yes_no":
        first = rng.choice(("yes", "no"))
        other = "no" if first == "yes" else "yes"
        answers = [first, first, first] if style == 0 else [first, first, other]
    else:
        picks = rng.sample(pool, 3) if len(pool) >= 3 else [pool[0]] * 3
        answers = [picks[0]] * 3 if style == 0 else [picks[0], picks[0], picks[1]] if style == 1 else picks
    rng.shuffle(answers)
    return answers


def _confidence(rng: random.Random) -> str:
    word = rng.choices(("yes", "maybe", "no"), weights=(6, 3, 1))[0]
    return word.capitalize() if rng.random() < 0.4 else word


def _write_wav(path: Path, seed: int, duration: float, shown: Path) -> None:
    noise = np.random.default_rng(seed)
    t = np.arange(int(SAMPLING_RATE * duration)) / SAMPLING_RATE
    tone = 0.3 * np.sin(2 * np.pi * noise.uniform(110, 1760) * t) + 0.02 * noise.standard_normal(t.size)
    try:
        soundfile.write(path, tone.astype(np.float32), SAMPLING_RATE, subtype="PCM_16", format="WAV")
    except soundfile.LibsndfileError as exc:  # a full disk is libsndfile's "error while writing": named by its file
        raise OSError(errno.ENOSPC if "writ" in str(exc).lower() else errno.EIO, str(exc), str(shown)) from None


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_synthetic_release(
    out_dir: str | os.PathLike,
    num_files: int = 10,
    seed: int = 0,
    *,
    duration: float = 0.2,
    quirks: bool = True,
    metadata: bool = True,
    overwrite: bool = False,
) -> SyntheticRelease:
    """Write a synthetic release of ``num_files`` clips (split about 60/20/20) into ``out_dir``.

    Each clip: 4 yes/no and 2 single-word questions; every validation/test answer also occurs in train.

    Example:
        >>> import os, tempfile
        >>> rel = write_synthetic_release(os.path.join(tempfile.mkdtemp(), "clotho_synth"), num_files=10, seed=1)
        >>> sorted(p.name for p in rel.root.iterdir())[:3]
        ['.ownership.json', 'audio_files', 'clotho_aqa_metadata.csv']
    """
    if type(num_files) is not int or not 3 <= num_files <= MAX_FILES:
        raise ValueError(f"num_files must be at least 3 (one clip per split) and at most {MAX_FILES}, got {num_files!r}")
    Integer(0, maximum=MAX_SEED)("seed", seed)
    duration = duration_seconds(duration)
    out = Path(out_dir)
    rng = random.Random(seed)
    sizes = _split_sizes(num_files)
    names, on_disk, quirk_names = _clip_names(num_files, sizes["train"], rng, quirks)
    files = {"train": names[: sizes["train"]]}
    files["validation"] = names[sizes["train"] : sizes["train"] + sizes["validation"]]
    files["test"] = names[sizes["train"] + sizes["validation"] :]

    with OutputFolder.open(out, command=OWNER, overwrite=overwrite) as folder:
        tmp = folder.stage
        (tmp / AUDIO_DIR).mkdir()
        train_words: list[str] = []
        num_rows, num_questions = {}, {}
        style_cycle = 0
        for split, split_files in files.items():
            rows = []
            for clip in split_files:
                pool = list(_WORDS) if split == "train" else sorted(set(train_words))
                kinds = ["yes_no"] * 4 + ["single_word"] * 2
                rng.shuffle(kinds)
                things = rng.sample(_THINGS, 4)
                yes_no_texts = [template.format(thing) for template, thing in zip(rng.sample(_YES_NO, 4), things)]
                single_texts = rng.sample(_SINGLE_WORD, 2)
                if quirks and clip == quirk_names.get("apostrophe_entity"):
                    # The official quirk: one clip asks the same yes/no question twice in a row.
                    kinds = ["yes_no", "yes_no", "yes_no", "yes_no", "single_word", "single_word"]
                    yes_no_texts[1] = yes_no_texts[0] = DUPLICATED_QUESTION
                if quirks and clip == quirk_names.get("ampersand_entity"):
                    single_texts[0] = MOJIBAKE_QUESTION
                for kind in kinds:
                    text = yes_no_texts.pop() if kind == "yes_no" else single_texts.pop()
                    style = style_cycle % (2 if kind == "yes_no" else 3)
                    style_cycle += 1
                    answers = _answers(rng, pool, kind, style)
                    if split == "train" and kind == "single_word":
                        train_words.extend(answers)
                    rows.extend([clip, text, answer, _confidence(rng)] for answer in answers)
            _write_csv(tmp / SPLIT_CSVS[split], list(QA_COLUMNS), rows)
            num_rows[split] = len(rows)
            num_questions[split] = len(rows) // 3

        # One clip more than the tables use, as in the official zip.
        disk_names = [on_disk[n] for n in names] + [f"Unused clip {seed}.wav"]
        for index, disk_name in enumerate(disk_names):
            _write_wav(tmp / AUDIO_DIR / disk_name, seed * 100_003 + index, duration, out / AUDIO_DIR / disk_name)

        if metadata:
            meta_rows = []
            for index, name in enumerate(names):
                meta_name = name
                if quirks and name == quirk_names.get("metadata_underscore"):
                    meta_name = name.replace("07.15", "07_15")
                length = int(rng.uniform(20, 30) * SAMPLING_RATE)
                start = rng.randrange(0, 5 * SAMPLING_RATE)
                start_end = "" if index % 3 == 2 else f"[{start}, {start + length}]"
                license_ = "" if index == len(names) - 1 else rng.choice(LICENSES)
                user = f"recordist{rng.randrange(100):02d}"
                meta_rows.append([
                    index,
                    meta_name,
                    ";".join(rng.sample([w for w in _WORDS if len(w) > 3] + ["field-recording", "ambience"], 3)),
                    f"https://freesound.org/people/{user}/sounds/{100000 + index}/",
                    start_end,
                    rng.choice(("Zoom H4n", "Tascam DR-40", "", "Sony PCM-M10")),
                    license_,
                ])
            # the official table's first column is an unnamed index
            _write_csv(tmp / METADATA_CSV, ["", *METADATA_COLUMNS], meta_rows)

        written = [path.relative_to(tmp).as_posix() for path in sorted(tmp.rglob("*"))
                   if path.is_file() and not path.name.startswith(".")]
        folder.add(written, remove=[p for p, e in folder.record.items() if e.command == OWNER])
    return SyntheticRelease(root=out, files=files, num_rows=num_rows, num_questions=num_questions, quirk_names=quirk_names)
