"""Safety rows of the Hub export's media options (``--media shared``, ``--audio_format flac``,
``--plan``): each tries to make the export touch a user's folder or leave half-written output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile

from safety_harness import Case, run_case


def _release(tmp: Path) -> Path:
    from clotho_aqa.synth import write_synthetic_release

    return write_synthetic_release(tmp / "release", num_files=5, seed=0).root


def _users_folder(tmp: Path) -> Path:
    out = tmp / "hub"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    return out


def _plan_into_a_users_folder(tmp: Path) -> list[str]:
    release, out = _release(tmp), _users_folder(tmp)
    return ["clotho-aqa", "export", "--data_dir", str(release), "--out", str(out), "--plan", "--media", "shared",
            "--config", "questions", "--quiet"]


def _plan_wrote_nothing(tmp: Path, done) -> None:
    assert sorted(p.name for p in (tmp / "hub").iterdir()) == ["notes.txt"]
    assert "clips" in done.stdout and "shared*" in done.stdout


def _float_wav_with_flac(tmp: Path) -> list[str]:
    release, out = _release(tmp), _users_folder(tmp)
    victim = sorted((release / "audio_files").glob("*.wav"))[0]
    soundfile.write(victim, np.zeros(4410, dtype="float32"), 44100, subtype="FLOAT")
    return ["clotho-aqa", "export", "--data_dir", str(release), "--out", str(out), "--media", "shared",
            "--audio_format", "flac", "--config", "questions", "--quiet"]


def _shared_with_a_missing_wav(tmp: Path) -> list[str]:
    release, out = _release(tmp), _users_folder(tmp)
    sorted((release / "audio_files").glob("*.wav"))[0].unlink()
    return ["clotho-aqa", "export", "--data_dir", str(release), "--out", str(out), "--media", "shared",
            "--config", "questions", "--quiet"]


CASES = [
    Case("--plan writes nothing into a user's folder", _plan_into_a_users_folder,
         protected=["hub/**", "release/**"], check=_plan_wrote_nothing),
    Case("--audio_format flac on a float WAV", _float_wav_with_flac, exit_code=2,
         stderr_has="FLOAT samples have no lossless FLAC form", protected=["hub/**", "release/**"],
         check=lambda tmp, done: sorted(p.name for p in (tmp / "hub").iterdir()) == ["notes.txt"] or pytest.fail("wrote")),
    Case("--media shared with a WAV missing", _shared_with_a_missing_wav, exit_code=2,
         stderr_has="Crickets at the market 03.wav",
         protected=["hub/**", "release/**"]),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hub_media_safety(case, tmp_path):
    run_case(case, tmp_path)
