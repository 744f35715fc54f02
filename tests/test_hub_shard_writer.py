"""The shard writer against the library it replaces: for every kind of configuration an export
writes (inline images and clips, the shared media configurations, conversations with a list of
media per row, FLAC), each shard's file is byte for byte the one ``push_to_hub``'s embedding
(``embed_table_storage``) written by ``Dataset.to_parquet`` gives."""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path

import datasets
import pyarrow as pa
import pytest
from PIL import Image
from datasets.table import embed_array_storage, embed_table_storage

from builder_test_helpers import BuilderSpec, build
from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub.audio_format import encode_flac
from builder_utils.hub.export import ExportError, plan_split, write_shards
from builder_utils.hub.derived import resolve
from builder_utils.hub.layout import layout_of
from builder_utils.hub.outputs import assemble
from builder_utils.hub.shard_writer import WriteStopped, embed_media, write_parquet_shard
from clevr_math import ClevrMath
from clotho_aqa import ClothoAQA
from clotho_aqa.synth import write_synthetic_release


def _reference(rows: datasets.Dataset, path: Path, batch_size: int, flac: bool) -> bytes:
    embedded = rows.with_format("arrow").map(embed_table_storage, batched=True, keep_in_memory=True)
    if flac:
        embedded = datasets.Dataset(datasets.table.InMemoryTable(encode_flac(embedded.data.table, rows.features)),
                                    info=rows.info.copy())
    embedded.to_parquet(str(path), batch_size=batch_size)
    return path.read_bytes()


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, dict]:
    """Every output configuration of both datasets: inline, shared media and conversations."""
    root = tmp_path_factory.mktemp("sources")
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 6, seed=0, splits=("train", "val"), progress=False)
    release = write_synthetic_release(root / "release", num_files=5, seed=0).root
    found = {}
    for builder_cls, data_dir, config in ((ClevrMath, clevr, "general"), (ClothoAQA, release, "questions")):
        built = {config: build(BuilderSpec(builder_cls, str(data_dir)), config, root / "cache")[1]}
        layout = layout_of(builder_cls)
        shared, _ = assemble([config, "conversations"], built, resolve(layout), "shared")
        found[f"{builder_cls.__name__}/{config}"] = built[config]
        found[f"{builder_cls.__name__}/{layout.media_config}"] = shared[layout.media_config]
        found[f"{builder_cls.__name__}/conversations"] = shared["conversations"]
    return found


CASES = ["ClevrMath/general", "ClevrMath/images", "ClevrMath/conversations",
         "ClothoAQA/questions", "ClothoAQA/clips", "ClothoAQA/conversations"]


@pytest.mark.parametrize("name", CASES)
def test_every_shard_is_the_librarys_file_byte_for_byte(outputs, tmp_path, name):
    splits = outputs[name]
    for split, rows in splits.items():
        _, jobs = plan_split(rows, "cfg", split, "60KB")  # small shards: several per split
        flac = name.startswith("ClothoAQA") and split == "train"
        written = write_shards(jobs, tmp_path / "ours", audio_format="flac" if flac else "wav")
        assert sum(w.rows for w in written) == len(rows)
        for job, shard in zip(jobs, written):
            expected = _reference(job.rows, tmp_path / "reference.parquet", job.batch_size, flac and job.embed)
            assert (tmp_path / "ours" / job.name).read_bytes() == expected, (name, job.name)
            assert shard.sha256 == hashlib.sha256(expected).hexdigest()  # hashed while being written
    assert any(job.embed for job in jobs) or name.endswith("questions")


def test_a_list_of_files_embeds_only_the_slices_own(tmp_path):
    files = []
    for k in range(4):
        path = tmp_path / f"{k}.png"
        path.write_bytes(bytes([k]) * (k + 1))
        files.append(str(path))
    feature = datasets.List(datasets.Image())
    storage = pa.array([[{"bytes": None, "path": f} for f in files[:2]], None, [{"bytes": None, "path": files[3]}]],
                       datasets.Features({"x": feature}).arrow_schema.field("x").type)
    sliced = storage.slice(1, 2)
    ours = embed_media(sliced, feature)
    assert ours.to_pylist() == [None, [{"bytes": b"\x03" * 4, "path": "3.png"}]]
    assert ours.equals(embed_array_storage(sliced, feature))
    Path(files[0]).unlink()  # the sliced-off rows' files are never read


def test_a_set_stop_event_ends_the_shard_between_batches(tmp_path):
    features = datasets.Features({"q": datasets.Value("string")})
    stop = threading.Event()
    stop.set()
    with pytest.raises(WriteStopped):
        write_parquet_shard(pa.table({"q": ["a", "b", "c"]}), features, tmp_path / "s.parquet", 1, stop=stop)


def test_a_media_file_gone_between_plan_and_write_is_named(tmp_path):
    paths = []
    for k in range(3):
        path = tmp_path / f"{k}.png"
        Image.new("RGB", (4, 4), (k, 0, 0)).save(path)
        paths.append(str(path))
    features = datasets.Features({"image": datasets.Image()})
    storage = pa.array([{"bytes": None, "path": p} for p in paths], features.arrow_schema.field("image").type)
    table = pa.table({"image": storage}, schema=features.arrow_schema)
    rows = datasets.Dataset(datasets.table.InMemoryTable(table), info=datasets.DatasetInfo(features=features))
    _, jobs = plan_split(rows, "images", "train")
    Path(paths[1]).unlink()
    expected = re.escape(paths[1]) + r": cannot read it for images/train-00000-of-00001\.parquet"
    with pytest.raises(ExportError, match=expected):
        write_shards(jobs, tmp_path / "out")
