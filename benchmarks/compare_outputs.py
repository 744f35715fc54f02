"""Byte-for-byte comparison of every command's output between this checkout and another one.

    .venv/bin/python benchmarks/compare_outputs.py --base /tmp/base            # two checkouts
    .venv/bin/python benchmarks/compare_outputs.py --against benchmarks/output_digests.json
    .venv/bin/python benchmarks/compare_outputs.py --record benchmarks/output_digests.json
    .venv/bin/python benchmarks/compare_outputs.py --base /tmp/base --scenes CLEVR_val_scenes_100.json

For a change that must not alter a single output byte (a speed-up, a restructuring): every
command runs on demo-sized synthetic data through its real console script, one process per
command, with ``PYTHONPATH`` set to the checkout (``--base`` is another one, e.g. ``git archive
62deeb7 | tar -x -C /tmp/base``). The commands (:data:`STEPS`): ``clevr-math synth``,
``clotho-aqa synth``, ``generate-questions`` for every shipped template set under flag sets
that reach different code paths, ``clevr-math demo`` and ``clotho-aqa demo``, ``export`` of both
datasets for each media layout, prompt style and audio format (and a ``--stream_questions``
export, and a recomputed split), ``evaluate`` of both (an export and a CLEVR folder), ``splits``
and ``push --dry_run``, and ``--help`` of every command. Each command's stdout and stderr are
compared too.

The commands run in a fresh folder (``--work``); its absolute path, where an output writes it
(a report's ``data_dir``, the cache's lock-file names), reads as ``<WORK>``, and a builder
cache's key (it hashes the code, by design) as ``<key>`` in the cache's folder names. Then every
file is compared, except those of :data:`IGNORED` (each with its reason). ``--record`` writes
the digests of a checkout's outputs; ``--against`` compares a checkout with recorded ones (no
second checkout needed). ``--tree`` names the checkout to run (default: this one).
``--scenes`` adds the ``generate-questions`` matrix on a real scene file (``--base`` only).
Exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
HERE = Path(__file__).resolve().parent.parent
TEMPLATE_SETS = ("clevr", "clevr_math", "clevr_math_chains", "clevr_math_long_chains")
SEEDS = (0, 1, 7)
# Flag sets that reach different code paths: answer bounds and post prompts (text), several
# instances per template and small balancing windows (acceptance order), small budgets.
FLAGS = {
    "default": [],
    "bounded": ["--add_post_prompt", "--max_answer", "5", "--bound_intermediate_counts"],
    "instances": ["--instances_per_template", "2", "--templates_per_image", "3", "--reset_counts_every", "16"],
    "budget": ["--search_budget", "150", "--templates_per_image", "20"],
}

#: Outputs that differ between two runs of the same checkout, by a pattern on their path
#: relative to the work folder, with the reason. Their records in an ``.ownership.json`` (which
#: hold their digests) are left out of its comparison too; everything else is compared.
IGNORED = {
    r"(^|/)media-checked\.json$": "the build's cache of media checks: keyed by each file's mtime (ns)",
}
#: Lines of the logs that hold a duration; the rest of each log is compared.
TIMING = re.compile(r"\b\d+(\.\d+)? ?(s|ms|seconds?|min)\b|\d+:\d\d(:\d\d)?|it/s|s/it")

CLEVR, RELEASE = "inputs/CLEVR_v1.0", "inputs/clotho_release"
SCENES = "inputs/scenes/scenes/CLEVR_val_scenes.json"
STEPS: list[tuple[str, list[str]]] = [
    ("clevr-math synth", ["clevr-math", "synth", "--out", CLEVR, "--num_scenes", "6", "--splits", "train,val,test",
                          "--quiet"]),
    ("clevr-math synth scenes", ["clevr-math", "synth", "--out", "inputs/scenes", "--num_scenes", "150",
                                 "--splits", "val", "--no_render", "--quiet"]),
    ("clotho-aqa synth", ["clotho-aqa", "synth", "--out", RELEASE, "--num_files", "12", "--seed", "1"]),
    *[(f"generate-questions {templates} {name}",
       ["generate-questions", "--input_scene_file", SCENES, "--output_questions_file",
        f"generate/{templates}-{name}.json", "--templates", templates, "--seed", "3", "--quiet", *flags])
      for templates in TEMPLATE_SETS for name, flags in FLAGS.items()],
    ("generate-questions parquet", ["generate-questions", "--input_scene_file", SCENES, "--output_questions_file",
                                    "generate/clevr_math.parquet", "--templates", "clevr_math", "--output_format",
                                    "parquet", "--quiet"]),
    ("clevr-math demo", ["clevr-math", "demo", "--out", "demo/clevr_math", "--num_scenes", "4"]),
    ("clotho-aqa demo", ["clotho-aqa", "demo", "--out", "demo/clotho_aqa"]),
    ("clevr-math export inline", ["clevr-math", "export", "--data_dir", CLEVR, "--out", "export/cm_inline",
                                  "--cache_dir", "cache/cm", "--config", "general,multihop,chains,conversations,"
                                  "prompts,prompts_multihop", "--quiet"]),
    ("clevr-math export shared boxed", ["clevr-math", "export", "--data_dir", CLEVR, "--out", "export/cm_shared",
                                        "--cache_dir", "cache/cm", "--media", "shared", "--prompt_style", "boxed",
                                        "--quiet"]),
    ("clevr-math export plain options", ["clevr-math", "export", "--data_dir", CLEVR, "--out", "export/cm_plain",
                                         "--config", "general,prompts", "--prompt_style", "plain", "--seed", "2",
                                         "--templates_per_image", "4", "--add_post_prompt", "--quiet"]),
    ("clevr-math export plan", ["clevr-math", "export", "--data_dir", CLEVR, "--out", "export/cm_plan",
                                "--cache_dir", "cache/cm", "--plan", "--media", "shared"]),
    ("clevr-math export stream", ["clevr-math", "export", "--out", "export/cm_stream", "--config", "prompts",
                                  "--stream_questions", "12", "--stream_seed", "5", "--quiet"]),
    ("clotho-aqa export inline", ["clotho-aqa", "export", "--data_dir", RELEASE, "--out", "export/ca_inline",
                                  "--cache_dir", "cache/ca", "--quiet"]),
    ("clotho-aqa export shared flac", ["clotho-aqa", "export", "--data_dir", RELEASE, "--out", "export/ca_shared",
                                       "--cache_dir", "cache/ca", "--media", "shared", "--audio_format", "flac",
                                       "--quiet"]),
    ("clotho-aqa export recomputed", ["clotho-aqa", "export", "--data_dir", RELEASE, "--out", "export/ca_recomputed",
                                      "--config", "questions,yes_no_majority", "--split_strategy", "recomputed",
                                      "--candidates", "20", "--keep", "3", "--refine_rounds", "50", "--quiet"]),
    ("clevr-math evaluate export", ["clevr-math", "evaluate", "--data", "export/cm_inline", "--config", "multihop",
                                    "--scenes", CLEVR, "--out", "evaluate/cm_export", "--bootstrap", "200"]),
    ("clevr-math evaluate data_dir", ["clevr-math", "evaluate", "--data", CLEVR, "--config", "general",
                                      "--split", "validation", "--cache_dir", "cache/cm_eval", "--out",
                                      "evaluate/cm_data_dir", "--bootstrap", "200"]),
    ("clotho-aqa evaluate export", ["clotho-aqa", "evaluate", "--data", "export/ca_inline", "--config", "questions",
                                    "--out", "evaluate/ca_export", "--bootstrap", "200"]),
    ("clotho-aqa evaluate data_dir", ["clotho-aqa", "evaluate", "--data", RELEASE, "--config", "yes_no_unfiltered",
                                      "--cache_dir", "cache/ca_eval", "--out", "evaluate/ca_data_dir",
                                      "--bootstrap", "200"]),
    ("clotho-aqa splits", ["clotho-aqa", "splits", "--data_dir", RELEASE, "--out", "splits/splits.csv", "--report",
                           "splits/report.json", "--candidates", "30", "--keep", "4", "--quiet"]),
    ("clevr-math push dry run", ["clevr-math", "push", "--folder", "export/cm_shared", "--repo_id", "me/clevr-math",
                                 "--dry_run"]),
    ("clotho-aqa push dry run", ["clotho-aqa", "push", "--folder", "export/ca_inline", "--repo_id", "me/clotho-aqa",
                                 "--dry_run"]),
    # --help of every command: a docstring or declaration change must not alter what users read
    *[(f"help {' '.join(command)}", [*command, "--help"]) for command in (
        ("generate-questions",), ("clevr-math",), ("clotho-aqa",),
        *(("clevr-math", sub) for sub in ("synth", "demo", "export", "push", "evaluate")),
        *(("clotho-aqa", sub) for sub in ("synth", "demo", "splits", "export", "push", "evaluate")))],
]


def library_versions() -> dict[str, str]:
    """The versions of the libraries that write the outputs (recorded digests hold for these)."""
    from importlib.metadata import version

    return {name: version(name) for name in ("datasets", "pyarrow", "pillow", "numpy", "soundfile", "huggingface_hub")}


def run_tree(tree: Path, work: Path, steps: list[tuple[str, list[str]]]) -> None:
    """Run every step with ``tree`` first on the path, in ``work`` (emptied first); logs in ``work/logs``."""
    if work.exists():
        shutil.rmtree(work)
    (work / "logs").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "NO_COLOR": "1", "COLUMNS": "100"}
    for label, (script, *args) in steps:
        log = work / "logs" / label.replace(" ", "_")
        with open(f"{log}.out", "w") as out, open(f"{log}.err", "w") as err:
            done = subprocess.run([str(BIN / script), *args], cwd=work, env=env, stdout=out, stderr=err)
        if done.returncode != 0:
            raise SystemExit(f"{tree}: {label}: status {done.returncode}: {Path(f'{log}.err').read_text()[-800:]}")
        print(f"  {tree.name}: {label}", flush=True)


def _ignored(relative: str) -> bool:
    return any(re.search(pattern, relative) for pattern in IGNORED)


# A builder's cache folder is named by its cache key (builder_utils.builder.cache_key), which
# hashes the package's code and the inputs' modification times by design: in the cache folders,
# and where a record names them, a 16-hex-digit key reads as <key>; their files are compared.
_KEY = re.compile(r"(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])")


def _work_forms(work: Path) -> tuple[str, str]:
    return str(work), str(work).replace("/", "_")  # the lock files of a cache name it this way


def _compared_name(relative: str, work: Path) -> str:
    for form in _work_forms(work):
        relative = relative.replace(form, "<WORK>")
    return _KEY.sub("<key>", relative) if "cache" in relative else relative


def normalized(path: Path, relative: str, work: Path) -> bytes:
    """The bytes compared: the work folder's path as ``<WORK>`` (also in the ``_``-joined form of
    the cache's lock files); logs without their duration lines; ownership records without the
    records of :data:`IGNORED` files, cache keys as ``<key>``, and without each file's size and
    digest (the file is compared itself, and may hold the work folder's path); every other file
    as it is."""
    data = path.read_bytes()
    for form in _work_forms(work):
        data = data.replace(form.encode(), b"<WORK>")
    if relative.startswith("logs/"):
        lines = data.decode("utf-8", "replace").splitlines(keepends=True)
        return "".join("<timing>\n" if TIMING.search(line) else line for line in lines).encode()
    if path.name == ".ownership.json":
        records = []
        for line in data.decode().splitlines(keepends=True):
            named = re.search(r'"path": "([^"]*)"', line)
            if named is None or not _ignored(named.group(1)):
                line = re.sub(r'"size": \d+, "sha256": "[0-9a-f]+"', '"size": -, "sha256": -', line)
                records.append(_compared_name(line, work) if named else line)
        return "".join(sorted(records)).encode()
    return data


def digests(work: Path) -> dict[str, str]:
    """``{compared name: sha256}`` of every compared file under ``work``."""
    found = {}
    for path in sorted(p for p in work.rglob("*") if p.is_file()):
        relative = path.relative_to(work).as_posix()
        if not _ignored(relative):
            name = _compared_name(relative, work)
            while name in found:  # two caches of one config: both compared, in path order
                name += "+"
            found[name] = hashlib.sha256(normalized(path, relative, work)).hexdigest()
    return found


def compare(new: dict[str, str], old: dict[str, str]) -> list[str]:
    """The differences, one line each (empty: identical)."""
    lines = [f"only in the base: {p}" for p in sorted(set(old) - set(new))]
    lines += [f"only here: {p}" for p in sorted(set(new) - set(old))]
    lines += [f"DIFFERENT: {p}" for p in sorted(set(new) & set(old)) if new[p] != old[p]]
    return lines


def generate_matrix(scenes: Path) -> list[tuple[str, list[str]]]:
    """``generate-questions`` on a real scene file: every template set, seed and flag set."""
    return [(f"{scenes.name} {templates} seed {seed} {name}",
             ["generate-questions", "--input_scene_file", str(scenes.resolve()), "--output_questions_file",
              f"real/{templates}-{seed}-{name}.json", "--templates", templates, "--seed", str(seed), "--quiet", *flags])
            for templates in TEMPLATE_SETS for seed in SEEDS for name, flags in FLAGS.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--base", type=Path, help="the checkout to compare with")
    mode.add_argument("--against", type=Path, help="digests recorded by --record to compare with")
    mode.add_argument("--record", type=Path, help="write the digests of this checkout's outputs")
    parser.add_argument("--tree", type=Path, default=HERE,
                        help="the checkout to test (default: this script's; e.g. a `git archive` of a commit)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/compare_outputs/run"),
                        help="folder the commands run in (emptied first; --base runs in WORK-base)")
    parser.add_argument("--scenes", type=Path, default=None, help="a real scene file: the generate-questions matrix")
    parser.add_argument("--label", default="", help="with --record: what the digests are of (e.g. a commit)")
    args = parser.parse_args()
    if args.scenes is not None and args.base is None:
        parser.error("--scenes needs --base (a real scene file is not part of the recorded digests)")
    steps = STEPS + (generate_matrix(args.scenes) if args.scenes else [])
    work = args.work.resolve()
    tree = args.tree.resolve()
    print(f"{tree}: {len(steps)} commands in {work}", flush=True)
    run_tree(tree, work, steps)
    new = digests(work)
    if args.record is not None:
        args.record.write_text(json.dumps({"label": args.label, "ignored": IGNORED, "versions": library_versions(),
                                           "files": new}, indent=1, sort_keys=True) + "\n")
        print(f"{len(new)} digests written to {args.record}")
        return
    if args.against is not None:
        recorded = json.loads(args.against.read_text())
        old = recorded["files"]
        if recorded.get("versions", library_versions()) != library_versions():
            print(f"note: recorded with {recorded['versions']}, run with {library_versions()}")
    else:
        base_work = work.with_name(work.name + "-base")
        print(f"{args.base.resolve()}: the same commands in {base_work}", flush=True)
        run_tree(args.base.resolve(), base_work, steps)
        old = digests(base_work)
    differences = compare(new, old)
    print("\n".join(differences) or f"identical: all {len(new)} files")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
