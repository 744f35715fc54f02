"""Check that both builder modules still work as loading scripts under datasets 3.6.

Run it with the interpreter of a small environment pinned to ``datasets==3.6.0`` with this
package installed (``make test-legacy`` creates ``.venv-legacy`` and runs it)::

    .venv-legacy/bin/python tests/legacy/check_legacy_script.py [--workdir DIR]

CLEVR-Math: a tiny synthetic CLEVR world, the ``multihop`` config loaded through
``load_dataset("clevr_math/clevr_math.py", "multihop", data_dir=..., trust_remote_code=True)``
(the script is copied into a fresh modules cache, exactly as for users); splits, features and
the multihop rule are checked. Clotho-AQA: a small synthetic release, ``yes_no_majority`` through
``load_dataset("clotho_aqa/clotho_aqa.py", ...)``; splits, labels and a decoded clip are
checked. For both, the rows must equal those of the installed builder class. Then every check
of ``tests/datasets_adapter_checks.py`` (the internals of ``datasets`` the package uses, in
``builder_utils/datasets_adapter.py``) runs under 3.6. Exits 0 and prints
``legacy loading script OK`` on success.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "clevr_math", "clevr_math.py")
CLOTHO_SCRIPT = os.path.join(REPO, "clotho_aqa", "clotho_aqa.py")
SCENES_PER_SPLIT = 12


def _fail(message: str) -> None:
    print(f"legacy loading script FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default=None, help="scratch folder (default: a temporary one)")
    args = parser.parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="clevr-math-legacy-")
    # Module and dataset caches must be fresh and private: set before `datasets` is imported.
    os.environ["HF_MODULES_CACHE"] = os.path.join(workdir, "modules")
    os.environ["HF_DATASETS_CACHE"] = os.path.join(workdir, "datasets")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

    import datasets

    if not datasets.__version__.startswith("3."):
        _fail(f"expected datasets 3.x in this environment, found {datasets.__version__}")

    from builder_utils.clevr.synth import write_clevr_folder

    data_dir = str(
        write_clevr_folder(
            os.path.join(workdir, "CLEVR_v1.0"),
            SCENES_PER_SPLIT,
            seed=0,
            splits=("train", "val", "test"),
            progress=False,
        )
    )
    loaded = datasets.load_dataset(SCRIPT, "multihop", data_dir=data_dir, trust_remote_code=True)
    if sorted(loaded) != ["test", "train", "validation"]:
        _fail(f"splits {sorted(loaded)}")
    names = loaded["train"].features["category"].names
    multihop = names.index("multihop")
    for split, ds in loaded.items():
        if ds.num_rows == 0:
            _fail(f"{split} is empty")
        is_multihop = [c == multihop for c in ds["category"]]
        if split == "test" and not all(is_multihop):
            _fail("test holds non-multihop questions")
        if split != "test" and any(is_multihop):
            _fail(f"{split} holds multihop questions")
    row = loaded["test"][0]
    if not isinstance(row["program"], list) or not {"function", "inputs", "value_inputs"} <= set(row["program"][0]):
        _fail(f"program is not a list of nodes: {row['program']!r}")
    if row["image"].size[0] <= 0 or not isinstance(row["label"], int):
        _fail("image or label not decoded")

    # The same module imported from the installed package must give the same rows.
    from clevr_math import ClevrMath

    builder = ClevrMath(config_name="multihop", data_dir=data_dir, cache_dir=os.path.join(workdir, "direct"))
    builder.download_and_prepare()
    direct = builder.as_dataset()
    for split in loaded:
        columns = ["question_id", "question", "label", "category", "template"]
        if loaded[split].select_columns(columns).to_list() != direct[split].select_columns(columns).to_list():
            _fail(f"{split}: rows differ between the loading script and the installed builder")
    clevr_sizes = ", ".join(f"{split} {ds.num_rows}" for split, ds in loaded.items())
    clotho_sizes = check_clotho_aqa(datasets, workdir)
    # The internals of datasets the package uses, one check each (tests/test_datasets_adapter.py under 5.x).
    sys.path.insert(0, os.path.join(REPO, "tests"))
    from datasets_adapter_checks import run_all

    failed = run_all()
    if failed:
        _fail("builder_utils.datasets_adapter under datasets " + datasets.__version__ + ":\n  " + "\n  ".join(failed))
    print(f"legacy loading script OK (datasets {datasets.__version__}; clevr_math multihop: {clevr_sizes}; "
          f"clotho_aqa yes_no_majority: {clotho_sizes})")
    return 0


def check_clotho_aqa(datasets, workdir: str) -> str:
    """Load ``clotho_aqa/clotho_aqa.py`` as a script; compare with the installed ``ClothoAQA``."""
    from clotho_aqa.synth import write_synthetic_release

    root = str(write_synthetic_release(os.path.join(workdir, "clotho_release"), num_files=6, seed=0).root)
    loaded = datasets.load_dataset(CLOTHO_SCRIPT, "yes_no_majority", data_dir=root, trust_remote_code=True)
    if sorted(loaded) != ["test", "train", "validation"]:
        _fail(f"clotho_aqa: splits {sorted(loaded)}")
    if loaded["train"].features["label"].names != ["yes", "no"]:
        _fail(f"clotho_aqa: label names {loaded['train'].features['label'].names}")
    from clotho_aqa import ClothoAQA, decode_audio, without_decoding

    # datasets 3.x decodes audio with librosa, which this package does not need: the
    # documented torch-free path (undecoded column + soundfile) is what is checked.
    row = without_decoding(loaded["validation"])[0]
    if not isinstance(row["keywords"], list):
        _fail(f"clotho_aqa: keywords is not a list: {row['keywords']!r}")
    array, rate = decode_audio(row)
    if rate != 44_100 or array.size == 0:
        _fail(f"clotho_aqa: audio not decoded: {rate} Hz, {array.size} samples")

    builder = ClothoAQA(config_name="yes_no_majority", data_dir=root, cache_dir=os.path.join(workdir, "clotho_direct"))
    builder.download_and_prepare()
    direct = builder.as_dataset()
    for split in loaded:
        columns = ["question_id", "question", "label", "answers", "file_name"]
        if loaded[split].select_columns(columns).to_list() != direct[split].select_columns(columns).to_list():
            _fail(f"clotho_aqa {split}: rows differ between the loading script and the installed builder")
    return ", ".join(f"{split} {ds.num_rows}" for split, ds in loaded.items())




if __name__ == "__main__":
    sys.exit(main())
