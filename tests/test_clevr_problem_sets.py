"""clevr_math.problems: fixed-size, map-style problem sets of the stream's rows, and weighted
mixtures of sets and of streams through datasets.interleave_datasets.

Real streams over synthetic worlds and over a rendered CLEVR_v1.0 folder; rows compared as plain
data with images as their bytes' sha256."""

from __future__ import annotations

import hashlib
from collections import Counter
from itertools import islice

import datasets
import pytest

from builder_utils.clevr.synth import write_clevr_folder
from clevr_math import StreamError, problems, stream
from clevr_math.problem_sets import MAX_PROBLEMS


def _plain(row: dict) -> dict:
    row = dict(row)
    row["images"] = [hashlib.sha256(image["bytes"]).hexdigest() for image in row["images"]]
    return row


def _rows(ds) -> list[dict]:
    undecoded = ds.cast_column("images", datasets.List(datasets.Image(decode=False)))
    return [_plain(row) for row in undecoded]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("clevr") / "CLEVR_v1.0"
    return write_clevr_folder(root, {"train": 6, "val": 3}, seed=5, progress=False)


def _first_rows(**kwargs):
    yield from stream(num_shards=1, **kwargs).decode(False)


def test_a_problem_set_is_the_streams_first_rows_with_random_access(tmp_path):
    ds = problems(size=9, seed=4, num_operations=1)
    assert isinstance(ds, datasets.Dataset) and len(ds) == 9 and ds.split == "train"
    assert ds.features == stream(seed=4).features
    # the reference: datasets' own map-style dataset of the same stream rows (Arrow gives the image
    # placeholder of the prompt its text: None, as in an exported prompts configuration)
    kwargs = {"seed": 4, "num_questions": 9, "num_operations": 1}
    reference = datasets.Dataset.from_generator(_first_rows, features=stream(seed=4).features, gen_kwargs=kwargs,
                                                cache_dir=str(tmp_path))
    expected = _rows(reference)
    assert _rows(ds) == expected
    assert [r["question_id"] for r in expected] == [r["question_id"] for r in _first_rows(**kwargs)]
    assert [row["extra_info"]["index"] for row in expected] == list(range(9))
    assert ds[7]["question_id"] == expected[7]["question_id"] and ds[7]["images"][0].size == (480, 320)
    assert len(set(ds["question_id"])) == 9 and set(ds["num_operations"]) == {1}


def test_same_seed_same_rows_other_seed_other_rows_and_smaller_sets_are_prefixes():
    first = _rows(problems(size=6, seed=2, num_operations=2))
    assert _rows(problems(size=6, seed=2, num_operations=2)) == first
    assert _rows(problems(size=3, seed=2, num_operations=2)) == first[:3]
    other = _rows(problems(size=6, seed=3, num_operations=2))
    assert [r["images"] for r in other] != [r["images"] for r in first]


def test_a_folder_problem_set_uses_its_split(folder):
    ds = problems(folder, size=5, split="validation", seed=1)
    assert len(ds) == 5 and ds.split == "validation"
    assert {row["extra_info"]["split"] for row in ds} == {"validation"}
    assert all(name.startswith("CLEVR_val_") for name in ds["image_filename"])


@pytest.mark.parametrize("kwargs, message", [
    ({"size": 0}, f"size must be an integer in 1..{MAX_PROBLEMS}, got 0"),
    ({"size": MAX_PROBLEMS + 1}, f"size must be an integer in 1..{MAX_PROBLEMS}, got {MAX_PROBLEMS + 1}"),
    ({"size": 2.0}, "size must be an integer"),
    ({"size": 2, "num_operations": 9}, "num_operations must be an integer in 1..8"),
    ({"size": 2, "colour": "red"}, "unknown stream option colour"),
    ({"size": 2, "split": "dev"}, "split must be one of"),
])
def test_bad_arguments_are_one_line_stream_errors(kwargs, message):
    with pytest.raises(StreamError, match=message.replace(".", r"\.")):
        problems(**kwargs)


def _mixture_of_sets(seed: int, one_op_size: int = 28, chains_size: int = 12) -> datasets.Dataset:
    one_op = problems(size=one_op_size, seed=10, num_operations=1)
    chains = problems(size=chains_size, seed=11, num_operations=3, operations="same_sign")
    return datasets.interleave_datasets([one_op, chains], probabilities=[0.7, 0.3], seed=seed,
                                        stopping_strategy="all_exhausted_without_replacement")


def test_a_weighted_mixture_of_problem_sets_is_deterministic():
    mixed = _mixture_of_sets(0)
    assert _rows(mixed) == _rows(_mixture_of_sets(0))
    assert [r["num_operations"] for r in mixed] != [r["num_operations"] for r in _mixture_of_sets(1)]
    assert {(r["question_id"], r["num_operations"]) for r in mixed} == \
        {(q, 1) for q in problems(size=28, seed=10, num_operations=1)["question_id"]} | \
        {(q, 3) for q in problems(size=12, seed=11, num_operations=3, operations="same_sign")["question_id"]}


def test_the_readme_mixture_gives_each_problem_once():
    # The README's recipe (issue 40): 70 + 30 problems are 100 rows, none twice ("all_exhausted"
    # would draw the smaller set again until the larger one ran out: 111 rows).
    mixed = _mixture_of_sets(0, 70, 30)
    keys = [(r["question_id"], r["num_operations"]) for r in mixed]
    assert len(keys) == len(set(keys)) == 100
    assert Counter(n for _, n in keys) == {1: 70, 3: 30}


def test_a_problem_set_mixes_with_a_stream_as_an_iterable_dataset():
    fixed = problems(size=10, seed=12, num_operations=1)
    mixed = datasets.interleave_datasets([fixed.to_iterable_dataset(), stream(seed=13, num_operations=2, num_shards=1)],
                                         probabilities=[0.5, 0.5], seed=0)
    head = [_plain(row) for row in islice(mixed.decode(False), 16)]
    assert {r["num_operations"] for r in head} == {1, 2}
    from_set = [r for r in head if r["num_operations"] == 1]
    assert from_set == _rows(fixed)[:len(from_set)]  # the set's rows, in the set's order
    with pytest.raises(ValueError):  # what the README warns about: a Dataset and an IterableDataset
        datasets.interleave_datasets([fixed, stream(seed=13, num_shards=1)])


def _mixture_of_streams(seed: int) -> datasets.IterableDataset:
    one_op = stream(seed=20, num_operations=1, num_shards=1)
    chains = stream(seed=21, num_operations=2, num_shards=1)
    return datasets.interleave_datasets([one_op, chains], probabilities=[0.7, 0.3], seed=seed)


def test_a_weighted_mixture_of_endless_streams_is_deterministic_and_weighted():
    def head(ds, n=60):
        return [_plain(row) for row in islice(ds.decode(False), n)]

    first = head(_mixture_of_streams(0))
    assert first == head(_mixture_of_streams(0))
    assert [r["num_operations"] for r in first] != [r["num_operations"] for r in head(_mixture_of_streams(1))]
    shares = Counter(r["num_operations"] for r in first)
    assert set(shares) == {1, 2} and 0.5 <= shares[1] / len(first) <= 0.9  # 70 % expected (42 of 60)
    # each source's problems come in its own order: the mixture only picks which comes next
    one_op = [r for r in first if r["num_operations"] == 1]
    assert one_op == [_plain(row) for row in islice(stream(seed=20, num_operations=1, num_shards=1).decode(False),
                                                   len(one_op))]
