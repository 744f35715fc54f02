"""decode_audio: soundfile decoding of undecoded Audio values, channels kept as documented."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile

import datasets
from clotho_aqa import decode_audio, without_decoding

RATE = 44_100


def _tone(frames: int, freq: float) -> np.ndarray:
    return (0.5 * np.sin(2 * np.pi * freq * np.arange(frames) / RATE)).astype(np.float32)


@pytest.fixture
def mono(tmp_path):
    data = _tone(4410, 440)
    path = tmp_path / "mono.wav"
    soundfile.write(path, data, RATE, subtype="PCM_16")
    return path, data


@pytest.fixture
def stereo(tmp_path):
    data = np.stack([_tone(2205, 220), -0.25 * np.ones(2205, dtype=np.float32)], axis=1)  # (frames, 2)
    path = tmp_path / "stereo.wav"
    soundfile.write(path, data, 22_050, subtype="FLOAT")
    return path, data


def test_mono_from_path_row_and_bytes(mono):
    path, data = mono
    by_path, rate = decode_audio({"audio": {"bytes": None, "path": str(path)}})
    by_bytes, rate_b = decode_audio({"bytes": path.read_bytes(), "path": None})
    assert rate == rate_b == RATE
    assert by_path.shape == by_bytes.shape == (4410,) and by_path.dtype == np.float32
    np.testing.assert_allclose(by_path, data, atol=1 / 32768 * 2)  # PCM_16 quantisation
    np.testing.assert_array_equal(by_path, by_bytes)


def test_stereo_keeps_channels_first(stereo):
    path, data = stereo
    array, rate = decode_audio({"bytes": None, "path": str(path)})
    assert rate == 22_050  # the file's own rate: decode_audio never resamples
    assert array.shape == (2, 2205)
    np.testing.assert_allclose(array, data.T, atol=1e-6)
    averaged, _ = decode_audio({"bytes": None, "path": str(path)}, mono=True)
    assert averaged.shape == (2205,)
    np.testing.assert_allclose(averaged, data.mean(axis=1), atol=1e-6)


def test_decoded_dict_passes_through(stereo):
    _, data = stereo
    array, rate = decode_audio({"array": data.T, "sampling_rate": 22_050})
    assert rate == 22_050 and array.shape == (2, 2205)
    one, _ = decode_audio({"array": data[:, 0], "sampling_rate": 22_050})
    assert one.shape == (2205,)


def test_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="gone.wav"):
        decode_audio({"bytes": None, "path": str(tmp_path / "gone.wav")})
    with pytest.raises(ValueError, match="neither"):
        decode_audio({"bytes": None, "path": None})
    with pytest.raises(ValueError, match="cannot decode"):
        decode_audio({"bytes": b"RIFF not really a wav", "path": "x.wav"})
    with pytest.raises(ValueError, match="expects"):  # issue 37: a wrong type is a ValueError
        decode_audio(42)


def test_without_decoding_on_a_dataset(stereo):
    path, data = stereo
    ds = datasets.Dataset.from_dict({"audio": [str(path)]}).cast_column("audio", datasets.Audio(sampling_rate=RATE))
    plain = without_decoding(ds)
    assert plain.features["audio"] == datasets.Audio(sampling_rate=RATE, decode=False)
    row = plain[0]
    assert row["audio"]["path"] == str(path)
    array, rate = decode_audio(row)
    assert array.shape == (2, 2205) and rate == 22_050


def _dominant_frequency(signal: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(signal * np.hanning(len(signal))))
    return float(np.fft.rfftfreq(len(signal), 1 / rate)[np.argmax(spectrum)])


@pytest.mark.parametrize("target", [16_000, 22_050, 48_000])
def test_resampled_sine_keeps_frequency_length_and_amplitude(tmp_path, target):
    path = tmp_path / "sine.wav"
    soundfile.write(path, _tone(RATE, 440), RATE, subtype="PCM_16")  # one second at 440 Hz, amplitude 0.5
    array, rate = decode_audio({"bytes": None, "path": str(path)}, sampling_rate=target)
    assert rate == target
    assert array.shape == (target,) and array.dtype == np.float32  # one second at the new rate
    assert _dominant_frequency(array, rate) == pytest.approx(440, abs=1)
    expected = 0.5 * np.sin(2 * np.pi * 440 * np.arange(target) / target)
    middle = slice(target // 10, -target // 10)  # the filter's edges ring; the middle is the signal
    np.testing.assert_allclose(array[middle], expected[middle], atol=2e-3)


def test_resampling_keeps_channels_and_same_rate_is_untouched(stereo):
    path, data = stereo  # (frames, 2) at 22.05 kHz: a 110 Hz tone (220 cycles per 44,100 frames) and a constant
    array, rate = decode_audio({"bytes": None, "path": str(path)}, sampling_rate=11_025)
    assert rate == 11_025 and array.shape == (2, 1103)  # 2205 frames at half the rate, rounded up
    assert _dominant_frequency(array[0], rate) == pytest.approx(110, abs=10)  # 0.1 s: 10 Hz bins
    np.testing.assert_allclose(array[1, 200:-200], -0.25, atol=1e-3)
    mono, _ = decode_audio({"bytes": None, "path": str(path)}, sampling_rate=11_025, mono=True)
    np.testing.assert_allclose(mono, array.mean(axis=0), atol=1e-6)
    same, _ = decode_audio({"bytes": None, "path": str(path)}, sampling_rate=22_050)
    np.testing.assert_array_equal(same, data.T)


def test_decoded_dict_is_resampled_too():
    array, rate = decode_audio({"array": _tone(RATE, 1000), "sampling_rate": RATE}, sampling_rate=8_000)
    assert rate == 8_000 and array.shape == (8_000,)
    assert _dominant_frequency(array, rate) == pytest.approx(1000, abs=1)
    with pytest.raises(ValueError, match="sampling_rate must be"):
        decode_audio({"array": _tone(100, 1000), "sampling_rate": RATE}, sampling_rate=0)
