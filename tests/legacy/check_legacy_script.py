"""Check that ``clevr_math/clevr_math.py`` still works as a loading script under datasets 3.6.

Run it with the interpreter of a small environment pinned to ``datasets==3.6.0`` with this
package installed (``make test-legacy`` creates ``.venv-legacy`` and runs it)::

    .venv-legacy/bin/python tests/legacy/check_legacy_script.py [--workdir DIR]

It writes a tiny synthetic CLEVR world, loads the ``multihop`` config through
``load_dataset(<script path>, "multihop", data_dir=..., trust_remote_code=True)`` (the script is
copied into a fresh modules cache, exactly as for users), checks splits, features and the
multihop rule, and checks that the rows equal those of the installed ``ClevrMath`` class.
Exits 0 and prints ``legacy loading script OK`` on success.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "clevr_math", "clevr_math.py")
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
    sizes = ", ".join(f"{split} {ds.num_rows}" for split, ds in loaded.items())
    print(f"legacy loading script OK (datasets {datasets.__version__}; multihop: {sizes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
