"""builder_utils.media_check.check_all over many files: results in path order, the first failure in
path order raised, whichever thread finds which first (the threads take runs of files)."""

from __future__ import annotations

import pytest
from PIL import Image

from builder_utils.media_check import MediaError, check_all, check_png


def _pngs(folder, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = folder / f"CLEVR_train_{i:06d}.png"
        Image.new("RGB", (4 + i % 7, 3)).save(path)
        paths.append(str(path))
    return paths


def test_check_all_keeps_path_order_across_runs(tmp_path):
    paths = _pngs(tmp_path, 300)
    assert check_all(paths, check_png, workers=4) == [(4 + i % 7, 3) for i in range(300)]


def test_check_all_raises_the_first_failure_in_path_order(tmp_path):
    paths = _pngs(tmp_path, 300)
    for broken in (250, 70, 71):  # in another run than 250, and two in one run
        with open(paths[broken], "wb") as fh:
            fh.write(b"GIF89a not a png")
    with pytest.raises(MediaError, match=r"CLEVR_train_000070\.png: not a PNG image"):
        check_all(paths, check_png, workers=4)
