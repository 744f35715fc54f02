"""The ``[audio]`` path: exported Clotho-AQA decoded by ``datasets`` itself (torch + torchcodec + FFmpeg).

These tests run in the environment ``make test-audio`` builds (.venv-audio: CPU torch,
torchcodec, FFmpeg) and skip where torchcodec cannot be imported (the default ``make test``).
They check that what users do with the Hub dataset works: row access, iteration, streaming
and ``cast_column("audio", Audio(sampling_rate=16000))``, and that torchcodec and our
torch-free ``decode_audio`` agree on the samples.
"""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

import datasets
from builder_utils.hub import export_builder
from clotho_aqa import ClothoAQA, decode_audio, without_decoding
from clotho_aqa.synth import write_synthetic_release

try:  # torchcodec fails with OSError/RuntimeError (not ImportError) when FFmpeg or torch is unusable
    import torchcodec.decoders  # noqa: F401

    TORCHCODEC = None
except Exception as exc:  # noqa: BLE001
    TORCHCODEC = f"torchcodec unusable here ({type(exc).__name__}); `make test-audio` installs it"

pytestmark = pytest.mark.skipif(TORCHCODEC is not None, reason=TORCHCODEC or "")

CONFIG = "yes_no_majority"


@pytest.fixture(scope="module")
def export(tmp_path_factory):
    root = tmp_path_factory.mktemp("audio_export")
    release = write_synthetic_release(root / "release", num_files=5, seed=3)
    export_builder(
        ClothoAQA, root / "hub", card_template="clotho_aqa", data_dir=release.root, configs=[CONFIG],
        cache_dir=root / "build_cache", progress=False,
    )
    return root


@pytest.fixture(scope="module")
def loaded(export):
    return datasets.load_dataset(str(export / "hub"), CONFIG, cache_dir=str(export / "load_cache"))


def _file_samples(release, file_name: str) -> np.ndarray:
    data, rate = soundfile.read(release / "audio_files" / file_name, dtype="float32")
    assert rate == 44_100
    return data


def test_row_access_decodes_with_torchcodec(export, loaded):
    row = loaded["train"][0]
    decoder = row["audio"]
    assert type(decoder).__name__ == "AudioDecoder"
    samples = decoder.get_all_samples()
    assert samples.sample_rate == 44_100
    expected = _file_samples(export / "release", row["file_name"])
    np.testing.assert_allclose(samples.data.numpy()[0], expected, atol=1e-4)
    # decode_audio accepts the decoder too, and agrees with its own soundfile path.
    array, rate = decode_audio(row)
    plain, plain_rate = decode_audio(without_decoding(loaded["train"])[0])
    assert rate == plain_rate == 44_100
    np.testing.assert_allclose(array, plain, atol=1e-4)


def test_iteration_and_map_decode(loaded):
    rates = [row["audio"].get_all_samples().sample_rate for row in loaded["train"]]
    assert len(rates) == loaded["train"].num_rows and set(rates) == {44_100}
    lengths = loaded["train"].map(lambda row: {"frames": row["audio"].get_all_samples().data.shape[-1]})
    assert all(frames > 0 for frames in lengths["frames"])


def test_streaming_iteration(export, loaded):
    streamed = datasets.load_dataset(str(export / "hub"), CONFIG, split="train", streaming=True)
    first = next(iter(streamed))
    assert first["question_id"] == loaded["train"][0]["question_id"]
    array, rate = decode_audio(first)
    assert rate == 44_100 and array.ndim == 1
    np.testing.assert_allclose(array, decode_audio(loaded["train"][0])[0], atol=1e-6)


def test_cast_to_16khz_matches_soxr(loaded):
    resampled = loaded["train"].cast_column("audio", datasets.Audio(sampling_rate=16_000))
    row = resampled[0]
    ours, rate = decode_audio(without_decoding(loaded["train"])[0], sampling_rate=16_000)
    assert rate == 16_000
    samples = row["audio"].get_all_samples()
    assert samples.sample_rate == 16_000
    theirs = samples.data.numpy()[0]
    # FFmpeg's and soxr's filters differ at the edges and by a frame or so in length.
    assert abs(theirs.shape[0] - ours.shape[0]) <= 2
    n = min(theirs.shape[0], ours.shape[0])
    middle = slice(n // 10, n - n // 10)
    assert np.corrcoef(theirs[:n][middle], ours[:n][middle])[0, 1] > 0.99
    assert row["audio"]["sampling_rate"] == 16_000 and row["audio"]["array"].shape == theirs.shape
