"""The three "what this command wrote" records keep their bytes, and records written before
they shared :mod:`builder_utils.ownership` are still recognised (the literals below are what the
earlier code wrote)."""

from __future__ import annotations

import pytest

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub.manifest import MANIFEST, FileRecord, ManifestError, read_manifest, write_manifest
from builder_utils.owned import OwnedFolders, mark_written_by, written_by
from builder_utils.ownership import RecordError, read_record

DEMO_MANIFEST = '{\n "written_by": "clevr-math demo",\n "folders": [\n  "CLEVR_v1.0",\n  "cache"\n ]\n}\n'
MARKER = '{"written_by": "clotho-aqa synth"}\n'
SYNTH_MANIFEST = '{\n "seed": 3,\n "splits": {\n  "val": {\n   "images": false,\n   "scenes": 1\n  }\n }\n}\n'
HUB_MANIFEST = ('{\n  "format": 1,\n  "files": [\n    {\n      "path": "a/train-00000-of-00001.parquet",\n'
                '      "size": 4,\n      "sha256": "ab",\n      "config": "a"\n    }\n  ]\n}\n')


def test_demo_manifest_and_marker_bytes(tmp_path):
    OwnedFolders(tmp_path, "clevr-math demo").claim("cache", "CLEVR_v1.0")
    assert (tmp_path / ".clevr-math-demo.json").read_text() == DEMO_MANIFEST
    assert mark_written_by(tmp_path, "clotho-aqa synth").read_text() == MARKER


def test_earlier_demo_records_are_recognised(tmp_path):
    (tmp_path / ".clevr-math-demo.json").write_text(DEMO_MANIFEST)
    (tmp_path / ".clotho-aqa-synth.json").write_text(MARKER)
    assert OwnedFolders(tmp_path, "clevr-math demo").owned() == {"CLEVR_v1.0", "cache"}
    assert written_by(tmp_path, "clotho-aqa synth") and not written_by(tmp_path, "clotho-aqa demo")


def test_synth_manifest_bytes_and_an_earlier_one_recognised(tmp_path):
    root = write_clevr_folder(tmp_path / "w", {"val": 1}, seed=3, render=False, progress=False)
    assert (root / ".clevr-synth.json").read_text() == SYNTH_MANIFEST
    (root / ".clevr-synth.json").write_text(SYNTH_MANIFEST.replace('"seed": 3', '"seed": 4'))
    write_clevr_folder(root, {"val": 1}, seed=3, render=False, progress=False, overwrite=True)  # replaces its scenes
    assert (root / ".clevr-synth.json").read_text() == SYNTH_MANIFEST


def test_hub_manifest_bytes_and_errors_name_the_file(tmp_path):
    record = FileRecord("a/train-00000-of-00001.parquet", 4, "ab", "a")
    write_manifest(tmp_path, {record.path: record})
    assert (tmp_path / MANIFEST).read_text() == HUB_MANIFEST
    assert read_manifest(tmp_path) == {record.path: record}
    (tmp_path / MANIFEST).write_text(HUB_MANIFEST.replace('"format": 1', '"format": 9'))
    with pytest.raises(ManifestError, match=f"{MANIFEST}: cannot read the export's manifest .unknown format 9.; "
                                            "re-export into a new folder"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("kind", ["symlink", "folder"])
def test_a_record_that_is_not_a_regular_file_is_refused(tmp_path, kind):
    (tmp_path / "elsewhere.json").write_text(MARKER)
    path = tmp_path / ".clotho-aqa-synth.json"
    path.symlink_to(tmp_path / "elsewhere.json") if kind == "symlink" else path.mkdir()
    with pytest.raises(RecordError, match=r"\.clotho-aqa-synth\.json: not a regular file; clotho-aqa synth writes"):
        read_record(path, writer="clotho-aqa synth", noun="marker")
    assert not written_by(tmp_path, "clotho-aqa synth")
