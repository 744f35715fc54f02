# Two entry points for a fresh machine: `make demo` and `make test`.
# Each venv is rebuilt only when the packaging files change, so repeated runs are quick.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# A second, small environment pinned to datasets 3.6: both builder modules must still work
# there as a loading script (tests/test_legacy_script.py runs its check when it exists).
LEGACY_VENV := .venv-legacy
LEGACY_STAMP := $(LEGACY_VENV)/.installed
# A third, optional environment for the [audio] path (datasets decoding audio with torchcodec):
# torch's CPU build, torchcodec and FFmpeg. The default torch wheel pulls several GB of CUDA
# libraries; AUDIO_TORCH names the CPU build instead (2.13.0+cpu lies on this project's machines;
# elsewhere use PyTorch's CPU index). torchcodec 0.14 and later do not import beside it.
AUDIO_VENV := .venv-audio
AUDIO_STAMP := $(AUDIO_VENV)/.installed
AUDIO_TORCH ?= torch==2.13.0
AUDIO_TORCHCODEC ?= torchcodec>=0.11,<0.14
# A fourth, optional environment for the [train] path: real TRL trainers (SFT, GRPO) on our
# exports with tiny models built offline (tests/train/). torch goes in the same pip command as
# the rest so that nothing pulls the CUDA build; trl and transformers are the versions run for
# BENCHMARKS.md (assistant-only loss on vision data needs transformers>=5.18).
TRAIN_VENV := .venv-train
TRAIN_STAMP := $(TRAIN_VENV)/.installed
TRAIN_TORCH ?= torch==2.13.0
TRAIN_TRL ?= trl==1.16.0
TRAIN_TRANSFORMERS ?= transformers==5.24.0

.PHONY: demo test test-legacy test-audio test-train clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dask]'
	touch $(STAMP)

$(LEGACY_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(LEGACY_VENV)
	$(LEGACY_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LEGACY_VENV)/bin/python -m pip install --quiet 'datasets==3.6.0' -e .
	touch $(LEGACY_STAMP)

# torchcodec loads FFmpeg's shared libraries; as root on Debian/Ubuntu they are installed here.
$(AUDIO_STAMP): setup.cfg pyproject.toml
	@command -v ffmpeg >/dev/null || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null)
	@command -v ffmpeg >/dev/null || { echo "make test-audio needs FFmpeg (e.g. sudo apt-get install ffmpeg)" >&2; exit 1; }
	$(PYTHON) -m venv $(AUDIO_VENV)
	$(AUDIO_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(AUDIO_VENV)/bin/python -m pip install --quiet '$(AUDIO_TORCH)' '$(AUDIO_TORCHCODEC)' -e '.[test,audio]'
	touch $(AUDIO_STAMP)

$(TRAIN_STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(TRAIN_VENV)/bin/python -m pip install --quiet '$(TRAIN_TORCH)' '$(TRAIN_TRL)' '$(TRAIN_TRANSFORMERS)' -e '.[test,train]'
	touch $(TRAIN_STAMP)

demo: $(STAMP)
	$(VENV)/bin/clevr-math demo
	$(VENV)/bin/clotho-aqa demo

test: $(STAMP) $(LEGACY_STAMP)
	$(PY) -m pytest -q

test-legacy: $(LEGACY_STAMP)
	$(LEGACY_VENV)/bin/python tests/legacy/check_legacy_script.py

# Not part of `make test` (CI): it installs ~1 GB (see the README's Audio paragraph).
test-audio: $(AUDIO_STAMP)
	$(AUDIO_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/test_audio_torchcodec.py tests/test_clotho_aqa_audio.py

# Not part of `make test` either (~2 GB, offline once installed); `make test` skips tests/train/.
# TRAIN_PYTEST_ARGS=-s prints each run's per-step loss and rewards (the lines BENCHMARKS.md quotes).
test-train: $(TRAIN_STAMP)
	HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 $(TRAIN_VENV)/bin/python -m pytest -q -p no:cacheprovider $(TRAIN_PYTEST_ARGS) tests/train

clean:
	rm -rf $(VENV) $(LEGACY_VENV) $(AUDIO_VENV) $(TRAIN_VENV) demo_output .pytest_cache
