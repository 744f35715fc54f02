"""Tests of builder_utils.splits: iterative stratification, allocation error, two-stage search.

The `iterative-stratification` package is the reference for split quality; a plain one-sample-
at-a-time implementation written here is the oracle for the vectorised block placement.
All matrices are generated here (random, and shaped like Clotho-AQA's file-by-answer matrix).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builder_utils.splits import (
    SplitSearchResult,
    allocation_error,
    allocation_table,
    as_label_matrix,
    iterative_stratification,
    label_error,
    label_error_floor,
    refine_split,
    search_split,
    target_sizes,
    stage_seeds,
    stratify_batch,
)
from builder_utils.splits.stratify import _rank_options, integer_weights



# ---------------------------------------------------------------- generated label matrices


def random_matrix(n_samples: int, n_labels: int, density: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.random((n_samples, n_labels)) < density


def clotho_like(n_files: int, vocabulary: int, seed: int) -> np.ndarray:
    """Files x answers shaped like Clotho-AQA: yes/no nearly everywhere, Zipf-like single words,
    1-6 distinct words per file, every answer in at least two files."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(vocabulary) + 3.0) ** 1.1
    weights /= weights.sum()
    matrix = np.zeros((n_files, vocabulary + 2), dtype=bool)
    matrix[:, 0] = True
    matrix[:, 1] = rng.random(n_files) < 0.995
    for row in range(n_files):
        words = rng.choice(vocabulary, size=rng.integers(1, 7), replace=False, p=weights)
        matrix[row, 2 + words] = True
    return matrix[:, matrix.sum(axis=0) >= 2]


def to_sparse(matrix: np.ndarray) -> list[list[int]]:
    return [np.flatnonzero(row).tolist() for row in matrix]


def fold_counts(matrix: np.ndarray, folds: np.ndarray, n_folds: int) -> np.ndarray:
    return np.stack([matrix[folds == f].sum(axis=0) for f in range(n_folds)], axis=1)


# ---------------------------------------------------------------- the reference package


def package_folds(matrix: np.ndarray, ratios, seed: int) -> np.ndarray:
    """Folds from the `iterative-stratification` package, shuffled the way its ShuffleSplit does."""
    iterstrat = pytest.importorskip("iterstrat.ml_stratifiers")  # the `test` extra installs it
    rng = np.random.RandomState(seed)
    if len(ratios) == 2:
        splitter = iterstrat.MultilabelStratifiedShuffleSplit(n_splits=1, test_size=ratios[1], random_state=rng)
        _, test = next(splitter.split(np.zeros(len(matrix)), matrix))
        folds = np.zeros(len(matrix), dtype=int)
        folds[test] = 1
        return folds
    order = rng.permutation(len(matrix))
    shuffled = iterstrat.IterativeStratification(labels=matrix[order], r=np.asarray(ratios), random_state=rng)
    folds = np.empty(len(matrix), dtype=int)
    folds[order] = shuffled
    return folds


@pytest.mark.parametrize(
    "kind, n_samples, n_labels, ratios",
    [
        ("random", 300, 40, (0.6, 0.4)),
        ("random", 300, 40, (0.5, 0.5)),
        ("random", 240, 25, (0.6, 0.2, 0.2)),
        ("clotho", 400, 220, (0.6, 0.4)),
        ("clotho", 300, 160, (0.6, 0.2, 0.2)),
    ],
)
def test_allocation_error_no_worse_than_the_package(kind, n_samples, n_labels, ratios):
    # Both sides are randomised, so "no worse" is judged on averages: our mean error may not
    # exceed the package's by more than two standard errors of the difference of the means.
    ours, theirs = [], []
    for matrix_seed in (0, 1):
        if kind == "random":
            matrix = random_matrix(n_samples, n_labels, 0.1, matrix_seed)
        else:
            matrix = clotho_like(n_samples, n_labels, matrix_seed)
        seeds = np.random.SeedSequence(matrix_seed).spawn(10)
        for folds in stratify_batch(as_label_matrix(matrix), ratios, seeds):
            ours.append(allocation_error(matrix, folds.astype(int), ratios))
        theirs += [allocation_error(matrix, package_folds(matrix, ratios, seed), ratios) for seed in range(10)]
    noise = np.sqrt(np.var(ours, ddof=1) / len(ours) + np.var(theirs, ddof=1) / len(theirs))
    assert np.mean(ours) <= np.mean(theirs) + 2 * noise, (np.mean(ours), np.mean(theirs), noise)


def test_fold_sizes_follow_the_package_behaviour():
    # Wanted sizes only break ties, as in the package: train lands near, not exactly on, 60 %.
    matrix = clotho_like(400, 220, seed=3)
    ours = [np.mean(iterative_stratification(matrix, (0.6, 0.4), seed=s) == 0) for s in range(6)]
    theirs = [np.mean(package_folds(matrix, (0.6, 0.4), s) == 0) for s in range(6)]
    assert abs(np.mean(ours) - 0.6) < 0.03
    assert abs(np.mean(ours) - np.mean(theirs)) < 0.03


# ---------------------------------------------------------------- exactness of the vectorised algorithm


def one_by_one(matrix: np.ndarray, ratios, seed) -> np.ndarray:
    """Iterative stratification one sample at a time, drawing the same random numbers."""
    n, n_labels = matrix.shape
    weights = integer_weights(np.asarray(ratios) / np.sum(ratios))
    unit = int(weights.sum())
    rng = np.random.default_rng(seed)
    sample_rank = rng.permutation(n)
    label_rank = rng.permutation(n_labels)
    noise = rng.integers(0, 2**16, (n, len(weights)))
    want_label = matrix.sum(axis=0)[:, None] * weights
    want_size = n * weights
    folds = np.full(n, -1)

    def place(block, pull):
        block = sorted(block, key=lambda s: sample_rank[s])
        received = [0] * len(weights)  # the k-th sample a fold receives breaks ties by noise[block[k]]
        for sample in block:
            fold = min(
                range(len(weights)),
                key=lambda f: (-pull(f), -want_size[f], noise[block[received[f]], f], received[f], f),
            )
            received[fold] += 1
            folds[sample] = fold
            want_label[matrix[sample], fold] -= unit
            want_size[fold] -= unit

    while True:
        remaining = matrix[folds < 0].sum(axis=0)
        if not remaining.any():
            break
        label = min(np.flatnonzero(remaining), key=lambda l: (remaining[l], label_rank[l]))
        place(np.flatnonzero(matrix[:, label] & (folds < 0)), lambda f: want_label[label, f])
    place(np.flatnonzero(folds < 0), lambda f: 0)
    return folds


@pytest.mark.parametrize("ratios", [(0.6, 0.4), (0.5, 0.5), (0.6, 0.2, 0.2), (1, 1, 1)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_equals_one_sample_at_a_time(ratios, seed):
    matrix = random_matrix(60, 12, 0.12, seed)
    matrix[::7] = False  # some samples without labels
    expected = one_by_one(matrix, ratios, np.random.SeedSequence(seed))
    assert iterative_stratification(matrix, ratios, seed=seed).tolist() == expected.tolist()


@pytest.mark.parametrize("span", [10**6, 10**17])
def test_packed_option_ranking_equals_a_lexsort(span):
    # The packed-key sort (small spans) and its lexsort fallback (huge spans) must agree.
    rng = np.random.default_rng(span % 97)
    group = np.sort(rng.integers(0, 30, 4000))
    by_label = rng.integers(-span, span, 4000) // 10**5 * 10**5  # coarse values, so ties happen
    by_size = rng.integers(-span, span, 4000) // 10**5 * 10**5
    noise = rng.integers(0, 4, 4000)
    expected = np.lexsort((noise, -by_size, -by_label, group))
    assert (_rank_options(group, by_label, by_size, noise) == expected).all()


def test_a_batch_row_equals_a_single_run():
    matrix = as_label_matrix(clotho_like(150, 80, seed=5))
    seeds = np.random.SeedSequence(11).spawn(6)
    batch = stratify_batch(matrix, (0.6, 0.4), seeds)
    shifted = stratify_batch(matrix, (0.6, 0.4), seeds[2:])
    assert (batch[2:] == shifted).all()
    assert (iterative_stratification(matrix, (0.6, 0.4), seed=seeds[4]) == batch[4]).all()


def test_subset_runs_leave_other_samples_out():
    matrix = as_label_matrix(clotho_like(120, 60, seed=2))
    active = np.zeros((2, 120), dtype=bool)
    active[0, :70] = True
    active[1, 50:] = True
    folds = stratify_batch(matrix, (0.5, 0.5), np.random.SeedSequence(0).spawn(2), active=active)
    assert (folds[~active] == -1).all()
    assert set(np.unique(folds[active])) == {0, 1}


# ---------------------------------------------------------------- ratios, determinism, input forms


@pytest.mark.parametrize("ratios", [(0.6, 0.4), (0.7, 0.2, 0.1), (1, 1, 1, 1)])
def test_ratios_are_respected(ratios):
    matrix = random_matrix(500, 30, 0.1, seed=4)
    folds = iterative_stratification(matrix, ratios, seed=0)
    shares = np.asarray(ratios) / np.sum(ratios)
    sizes = np.bincount(folds, minlength=len(ratios))
    assert np.all(np.abs(sizes - shares * 500) <= 0.03 * 500)
    targets = matrix.sum(axis=0)[:, None] * shares
    # Stratified, not random: label counts miss their targets by far less than a random
    # assignment with the same ratios does.
    ours = np.abs(fold_counts(matrix, folds, len(ratios)) - targets).mean()
    rng = np.random.default_rng(0)
    random_folds = [rng.choice(len(ratios), size=500, p=shares) for _ in range(5)]
    chance = np.mean([np.abs(fold_counts(matrix, f, len(ratios)) - targets).mean() for f in random_folds])
    assert ours < chance / 2
    assert allocation_error(matrix, folds, ratios) < allocation_error(matrix, random_folds[0], ratios) / 2


def test_same_seed_same_folds_other_seed_other_folds():
    matrix = clotho_like(200, 90, seed=1)
    first = iterative_stratification(matrix, (0.6, 0.4), seed=7)
    assert (first == iterative_stratification(matrix, (0.6, 0.4), seed=7)).all()
    assert (first != iterative_stratification(matrix, (0.6, 0.4), seed=8)).any()


def test_sparse_and_dense_inputs_give_the_same_result():
    matrix = clotho_like(150, 70, seed=9)
    sparse = to_sparse(matrix)
    as_sets = [set(row) for row in sparse]
    dense_folds = iterative_stratification(matrix, (0.6, 0.2, 0.2), seed=3)
    assert (iterative_stratification(sparse, (0.6, 0.2, 0.2), seed=3) == dense_folds).all()
    assert (iterative_stratification(as_sets, (0.6, 0.2, 0.2), seed=3) == dense_folds).all()
    dense_result = search_split(matrix.astype(np.uint8), candidates=20, keep=4, seed=2, progress=False)
    sparse_result = search_split(sparse, candidates=20, keep=4, seed=2, progress=False)
    assert (dense_result.folds == sparse_result.folds).all()
    assert dense_result.report() == sparse_result.report()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.lists(st.integers(0, 9), max_size=5), min_size=3, max_size=40),
    ratios=st.sampled_from([(0.6, 0.4), (0.5, 0.5), (0.6, 0.2, 0.2), (2, 1, 1, 1)]),
    seed=st.integers(0, 2**32),
)
def test_every_sample_gets_one_fold_whatever_the_input(rows, ratios, seed):
    folds = iterative_stratification(rows, ratios, seed=seed, num_labels=10)
    assert folds.shape == (len(rows),)
    assert folds.min() >= 0 and folds.max() < len(ratios)
    dense = np.zeros((len(rows), 10), dtype=bool)
    for sample, row in enumerate(rows):
        dense[sample, row] = True
    assert (iterative_stratification(dense, ratios, seed=seed) == folds).all()


# ---------------------------------------------------------------- allocation error and table


def test_allocation_error_by_hand():
    labels = [[0], [0], [0, 1], [1], [1], [1]]
    folds = [0, 0, 1, 0, 1, 1]
    # label 0: shares (2/3, 1/3) vs (0.5, 0.5) -> 1/3; label 1: (1/4, 3/4) -> 1/2; sizes (3, 3) -> 0
    assert allocation_error(labels, folds, (0.5, 0.5)) == pytest.approx((1 / 3 + 1 / 2) / 2)
    # sizes (3, 3) against (2/3, 1/3): |0.5 - 2/3| + |0.5 - 1/3| = 1/3
    label_part = (abs(2 / 3 - 2 / 3) + abs(1 / 3 - 1 / 3) + abs(1 / 4 - 2 / 3) + abs(3 / 4 - 1 / 3)) / 2
    assert allocation_error(labels, folds, (2, 1)) == pytest.approx(label_part + 1 / 3)


def test_allocation_table_rows():
    labels = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0]])
    rows = allocation_table(labels, [0, 1, 0, 2], (0.5, 0.25, 0.25), label_names=["yes", "rain", "never"])
    assert rows == [
        {"label": "yes", "total": 3, "counts": [1, 1, 1], "targets": [1.5, 0.75, 0.75], "deviation": pytest.approx(1 / 3)},
        {"label": "rain", "total": 2, "counts": [1, 1, 0], "targets": [1.0, 0.5, 0.5], "deviation": 0.5},
    ]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: iterative_stratification(np.array([[0, 2]]), (0.5, 0.5)), "found 2 at row 0, column 1"),
        (lambda: iterative_stratification([[0], [-1]], (0.5, 0.5)), "sample 1 has a negative label index"),
        (lambda: iterative_stratification([[0], ["rain"]], (0.5, 0.5)), "sample 1 holds <U4 values"),
        (lambda: iterative_stratification([[0], "rain"], (0.5, 0.5)), "sample 1 is a string"),
        (lambda: iterative_stratification([[0], [0.5]], (0.5, 0.5)), "sample 1 holds float64"),
        (lambda: iterative_stratification([[0], [3]], (0.5, 0.5), num_labels=2), "sample 1 has label index 3"),
        (lambda: iterative_stratification(np.zeros(4), (0.5, 0.5)), "must be a 2-D"),
        (lambda: iterative_stratification([[0]], (1.0,)), "at least two fold ratios"),
        (lambda: iterative_stratification([[0]], (0.5, -0.5)), "positive"),
        (lambda: iterative_stratification([[0]], (0.5, 0.5), seed=-1), "seed"),
        (lambda: allocation_error([[0], [1]], [0, 2], (0.5, 0.5)), "sample 1 has fold 2"),
        (lambda: allocation_error([[0], [1]], [0], (0.5, 0.5)), "one fold index per sample (2)"),
        (lambda: allocation_table([[0], [1]], [0, 1], (0.5, 0.5), label_names=["a"]), "1 names for 2 labels"),
        (lambda: search_split([[0], [1]], candidates=0), "candidates"),
        (lambda: search_split([[0], [1]], ratios=(0.6, 0.2, 0.2)), "2 samples cannot fill 3 folds"),
    ],
)
def test_bad_input_is_named(call, message):
    with pytest.raises((ValueError, TypeError)) as error:
        call()
    assert message in str(error.value)


# ---------------------------------------------------------------- two-stage search


def test_search_meets_the_constraint_and_reports_it():
    matrix = clotho_like(300, 150, seed=6)
    names = [f"word{i}" for i in range(matrix.shape[1])]
    result = search_split(matrix, candidates=60, keep=8, seed=0, progress=False, label_names=names)
    assert isinstance(result, SplitSearchResult)
    assert result.violations == []
    counts = fold_counts(matrix, result.folds, 3)
    multi = matrix.sum(axis=0) >= 2
    assert (counts[multi, 0] > 0).all() and (counts[multi, 1:].sum(axis=1) > 0).all()
    assert result.error == pytest.approx(allocation_error(matrix, result.folds, (0.6, 0.2, 0.2)))

    report = json.loads(json.dumps(result.report()))
    assert sum(report["sizes"].values()) == 300
    assert report["sizes"] == dict(zip(("train", "validation", "test"), np.bincount(result.folds).tolist()))
    assert report["constraint"]["satisfied"] is True
    assert report["first_stage"]["splits"] == 60 and report["second_stage"]["splits"] == 8
    assert report["unique_labels"]["train"] == int((counts[:, 0] > 0).sum())
    by_name = {row["label"]: row for row in report["labels"]}
    assert by_name["word3"]["train"] == counts[3, 0] and by_name["word3"]["total"] == matrix[:, 3].sum()


def test_unsatisfiable_constraint_is_reported_not_hidden():
    # Three labels pairwise sharing a sample: train vs rest cannot split all three pairs.
    triangle = [[0, 1], [1, 2], [0, 2]]
    filler = [[3], [3], [4], [4], [3, 4], [5], [5]]
    result = search_split(triangle + filler, candidates=30, keep=5, seed=0, progress=False,
                          label_names=["a", "b", "c", "d", "e", "f"])
    assert result.violations
    assert set(result.violations) <= {"a", "b", "c"}
    table = allocation_table(triangle + filler, result.folds, (0.6, 0.2, 0.2), label_names=list("abcdef"))
    broken = [row["label"] for row in table if row["total"] >= 2 and row["counts"][0] in (0, row["total"])]
    assert sorted(broken) == sorted(result.violations)
    assert result.report()["constraint"]["satisfied"] is False


def test_search_is_deterministic_and_seeded():
    matrix = clotho_like(200, 100, seed=8)
    first = search_split(matrix, candidates=40, keep=6, seed=5, progress=False)
    again = search_split(matrix, candidates=40, keep=6, seed=5, progress=False)
    other = search_split(matrix, candidates=40, keep=6, seed=6, progress=False)
    assert (first.folds == again.folds).all()
    assert json.dumps(first.report()) == json.dumps(again.report())
    assert (first.folds != other.folds).any()


def test_search_picks_the_best_of_its_candidates():
    matrix = clotho_like(200, 100, seed=4)
    ratios = (0.6, 0.2, 0.2)
    result = search_split(matrix, ratios, candidates=12, keep=12, seed=3, progress=False)
    first_seeds, second_seeds = stage_seeds(3, 12)
    labels = as_label_matrix(matrix)
    errors = []
    for i in range(12):
        first = iterative_stratification(matrix, (0.6, 0.4), seed=first_seeds[i])
        rest = (first == 1)[None, :]
        second = stratify_batch(labels, (0.5, 0.5), [second_seeds[i]], active=rest)[0]
        final = np.where(first == 1, 1 + second, 0)
        errors.append(allocation_error(matrix, final, ratios))
        if i == result.chosen_candidate:
            assert (final == result.folds).all()
    assert result.error == pytest.approx(min(errors))


def test_keeping_more_candidates_never_hurts():
    matrix = clotho_like(200, 100, seed=12)
    narrow = search_split(matrix, candidates=30, keep=2, seed=0, progress=False)
    wide = search_split(matrix, candidates=30, keep=30, seed=0, progress=False)
    assert wide.error <= narrow.error
    assert search_split(matrix, candidates=30, keep=10, seed=0, progress=False).error <= narrow.error


def test_two_way_search_has_no_second_stage():
    matrix = clotho_like(120, 50, seed=0)
    result = search_split(matrix, ratios=(0.8, 0.2), candidates=10, keep=3, seed=0, progress=False)
    assert set(np.unique(result.folds)) == {0, 1}
    assert set(result.report()["sizes"]) == {"train", "test"}


# ---------------------------------------------------------------- the local search after the search


def label_counts_per_fold(matrix: np.ndarray, folds: np.ndarray, n_folds: int) -> np.ndarray:
    return np.stack([matrix[folds == f].sum(axis=0) for f in range(n_folds)], axis=1)


def meets_constraint(matrix: np.ndarray, folds: np.ndarray) -> bool:
    counts = label_counts_per_fold(matrix, folds, 3)
    totals = counts.sum(axis=1)
    checked = totals >= 2
    return bool(np.all((counts[checked, 0] >= 1) & (counts[checked, 0] < totals[checked])))


def test_label_error_is_the_label_deviation_summed_by_hand():
    matrix = clotho_like(120, 50, seed=3)
    folds = np.random.default_rng(0).integers(0, 3, len(matrix))
    counts = label_counts_per_fold(matrix, folds, 3)
    totals = counts.sum(axis=1)
    by_hand = sum(np.abs(counts[l] - np.array([0.6, 0.2, 0.2]) * totals[l]).sum() / totals[l] for l in range(len(totals)))
    assert label_error(matrix, folds, (0.6, 0.2, 0.2)) == pytest.approx(by_hand)


@pytest.mark.parametrize("ratios", [(0.6, 0.2, 0.2), (0.9, 0.05, 0.05), (0.05, 0.5, 0.45)])
def test_floor_equals_enumerating_every_count_vector(ratios):
    # Every label alone, every integer count vector that keeps the constraint: the floor is their minimum.
    sizes = [1, 2, 3, 4, 5, 7, 11, 16]
    labels = [[label] for label, n in enumerate(sizes) for _ in range(n)]
    r = np.asarray(ratios) / sum(ratios)
    total = 0.0
    for n in sizes:
        best = np.inf
        for c0 in range(n + 1):
            for c1 in range(n + 1 - c0):
                if n >= 2 and c0 in (0, n):
                    continue
                counts = np.array([c0, c1, n - c0 - c1])
                best = min(best, np.abs(counts - r * n).sum() / n)
        total += best
    assert label_error_floor(labels, ratios) == pytest.approx(total)


@pytest.mark.parametrize("seed", [0, 1])
def test_refined_split_beats_the_package_and_keeps_every_constraint(seed):
    # iterative-stratification (the package) is the reference: our search with the local search
    # must have a lower label error than its split, the same sizes as the targets, and the rule.
    matrix = clotho_like(300, 160, seed)
    ratios = (0.6, 0.2, 0.2)
    theirs = package_folds(matrix, ratios, seed)
    result = search_split(matrix, ratios, candidates=1, keep=1, seed=seed, progress=False, refine_rounds=200)
    assert result.label_error == pytest.approx(label_error(matrix, result.folds, ratios))
    assert result.label_error < label_error(matrix, theirs, ratios)
    assert result.label_error_floor <= result.label_error
    assert np.bincount(result.folds, minlength=3).tolist() == target_sizes(len(matrix), ratios).tolist()
    assert meets_constraint(matrix, result.folds) and result.violations == []
    report = result.report()
    assert report["label_error"] == round(result.label_error, 6) and report["refine"]["rounds"] == 200


def test_refine_is_deterministic_and_never_worse_than_its_start():
    matrix = clotho_like(250, 120, seed=5)
    start = iterative_stratification(matrix, (0.6, 0.2, 0.2), seed=1)
    first = refine_split(matrix, start, (0.6, 0.2, 0.2), rounds=100, seed=7)
    again = refine_split(matrix, start, (0.6, 0.2, 0.2), rounds=100, seed=7)
    other = refine_split(matrix, start, (0.6, 0.2, 0.2), rounds=100, seed=8)
    assert np.array_equal(first.folds, again.folds) and not np.array_equal(first.folds, other.folds)
    assert first.error_before == pytest.approx(label_error(matrix, start, (0.6, 0.2, 0.2)))
    assert first.error_after == pytest.approx(label_error(matrix, first.folds, (0.6, 0.2, 0.2)))
    # Sizes are moved onto the targets first, which may cost a little; the search then only gains.
    descent_only = refine_split(matrix, start, (0.6, 0.2, 0.2), rounds=0)
    assert first.error_after <= descent_only.error_after + 1e-9
    assert meets_constraint(matrix, first.folds)


def test_refine_keeps_a_rare_label_on_both_sides():
    # Two clips share the rare label 1; moving either alone across train/rest would break the rule.
    labels = [[0, 1], [0, 1]] + [[0]] * 8
    start = [0, 1] + [0] * 5 + [1] * 2 + [2]
    result = refine_split(labels, start, (0.6, 0.2, 0.2), rounds=50, seed=0)
    folds = result.folds
    assert (folds[:2] == 0).sum() == 1, folds


def test_refine_names_bad_input():
    with pytest.raises(ValueError, match="folds: expected one fold per sample"):
        refine_split([[0], [1]], [0], (0.5, 0.5))
    with pytest.raises(ValueError, match="rounds: expected a non-negative int"):
        refine_split([[0], [1]], [0, 1], (0.5, 0.5), rounds=-1)
