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
# A fifth, optional environment for the lmms-eval tasks: lmms-eval (the version the task index
# fixture and BENCHMARKS figures were made with) beside torch's CPU build, as for [audio].
# lmms-eval 0.7.3 imports filelock._api, which filelock 4 removed. PyPI's torchvision (an
# lmms-eval requirement) does not import beside that torch and breaks transformers' import;
# nothing lmms-eval runs here needs it, so it is removed. No torchcodec: the Clotho-AQA task
# decodes its clips with soundfile.
HARNESS_VENV := .venv-harness
HARNESS_STAMP := $(HARNESS_VENV)/.installed
HARNESS_TORCH ?= $(AUDIO_TORCH)
HARNESS_LMMS_EVAL ?= lmms-eval==0.7.3
# A sixth, optional environment for the Blender renderer (tests/render/): Python 3.11 with bpy
# 5.0.x (each bpy wheel serves one Python; 5.1 and later need 3.13), 1.7 GB installed. The package
# never imports bpy: the tests run Blender's studio script with this venv's Python.
RENDER_VENV := .venv-render
RENDER_STAMP := $(RENDER_VENV)/.installed
RENDER_PYTHON ?= $(shell command -v python3.11 || echo /root/.pyenv/versions/3.11.7/bin/python)
RENDER_BPY ?= bpy==5.0.1
# A seventh, optional environment for verl (tests/verl_train/): verl 0.9.1 pins transformers<5.11, so it
# cannot share .venv-train. torch's CPU build in the same pip command, as for [train]. No
# torchvision (PyPI's build does not load beside that torch), hence no qwen_vl_utils: verl's
# length filter of image prompts needs them, and tests/verl_train/ reads images without that filter.
# An eighth, optional environment for ms-swift (tests/swift_train/): ms-swift pins datasets<4.8.5 and
# transformers<5.17, so it cannot share .venv-train; torch's CPU build in the same pip command;
# librosa, its default audio loader, which it does not install itself.
SWIFT_VENV := .venv-swift
SWIFT_STAMP := $(SWIFT_VENV)/.installed
SWIFT_TORCH ?= $(TRAIN_TORCH)
SWIFT_MS_SWIFT ?= ms-swift==4.6.0
VERL_VENV := .venv-verl
VERL_STAMP := $(VERL_VENV)/.installed
VERL_TORCH ?= $(TRAIN_TORCH)
VERL_VERL ?= verl==0.9.1

.PHONY: demo test test-legacy test-audio test-train test-harness test-verl test-swift test-render clean bytecode

# What every environment's recipe does first: $(call new_venv,PYTHON,VENV,PIP ARGUMENTS) makes
# VENV with PYTHON, upgrades its pip and installs the arguments (a variable: they hold commas).
# Each recipe touches its stamp last, so an install that fails is tried again on the next run.
define new_venv
$(1) -m venv $(2)
$(2)/bin/python -m pip install --quiet --upgrade pip
$(2)/bin/python -m pip install --quiet $(3)
endef
MAIN_INSTALL = -e '.[test,dask]'
TRAIN_INSTALL = '$(TRAIN_TORCH)' '$(TRAIN_TRL)' '$(TRAIN_TRANSFORMERS)' -e '.[test,train]'
AUDIO_INSTALL = '$(AUDIO_TORCH)' '$(AUDIO_TORCHCODEC)' -e '.[test,audio]'
RENDER_INSTALL = '$(RENDER_BPY)' -e '.[test,dask]'

$(STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(PYTHON),$(VENV),$(MAIN_INSTALL))
	touch $(STAMP)

$(LEGACY_STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(PYTHON),$(LEGACY_VENV),'datasets==3.6.0' -e .)
	touch $(LEGACY_STAMP)

# torchcodec loads FFmpeg's shared libraries; as root on Debian/Ubuntu they are installed here.
$(AUDIO_STAMP): setup.cfg pyproject.toml
	@command -v ffmpeg >/dev/null || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null)
	@command -v ffmpeg >/dev/null || { echo "make test-audio needs FFmpeg (e.g. sudo apt-get install ffmpeg)" >&2; exit 1; }
	$(call new_venv,$(PYTHON),$(AUDIO_VENV),$(AUDIO_INSTALL))
	touch $(AUDIO_STAMP)

$(TRAIN_STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(PYTHON),$(TRAIN_VENV),$(TRAIN_INSTALL))
	touch $(TRAIN_STAMP)

$(HARNESS_STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(PYTHON),$(HARNESS_VENV),'$(HARNESS_TORCH)' '$(HARNESS_LMMS_EVAL)' 'filelock<4' -e '.[test]')
	$(HARNESS_VENV)/bin/python -m pip uninstall --quiet --yes torchvision
	touch $(HARNESS_STAMP)

$(VERL_STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(PYTHON),$(VERL_VENV),'$(VERL_TORCH)' '$(VERL_VERL)' -e '.[test]')
	touch $(VERL_STAMP)

$(SWIFT_STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(PYTHON),$(SWIFT_VENV),'$(SWIFT_TORCH)' '$(SWIFT_MS_SWIFT)' librosa -e '.[test]')
	touch $(SWIFT_STAMP)

$(RENDER_STAMP): setup.cfg pyproject.toml
	$(call new_venv,$(RENDER_PYTHON),$(RENDER_VENV),$(RENDER_INSTALL))
	touch $(RENDER_STAMP)

# The package's modules compiled ahead (0.07 s when up to date): an editable install leaves
# that to the first import, and with PYTHONDONTWRITEBYTECODE set (as on some CI machines) every
# command would compile them again, about 0.09 s of each start-up.
bytecode: $(STAMP)
	$(PY) -m compileall -q builder_utils clevr_math clotho_aqa

demo: $(STAMP) bytecode
	$(VENV)/bin/clevr-math demo
	$(VENV)/bin/clotho-aqa demo

# One pytest worker per core (pytest-xdist): the suite's cases are independent subprocess runs.
test: $(STAMP) $(LEGACY_STAMP) bytecode
	$(PY) -m pytest -q -n auto

test-legacy: $(LEGACY_STAMP)
	$(LEGACY_VENV)/bin/python tests/legacy/check_legacy_script.py

# Not part of `make test` (CI): it installs ~1 GB (see the README's Audio paragraph).
test-audio: $(AUDIO_STAMP)
	$(AUDIO_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/test_audio_torchcodec.py tests/test_clotho_aqa_audio.py

# Not part of `make test` (CI): it installs ~2.5 GB; builds the demo export and runs our tasks
# inside lmms-eval (see builder_utils/evaluation/README.md, "lmms-eval"), among them both datasets'
# tasks with a deterministic chat model registered through lmms-eval's entry-point group
# (tests/lmms_eval_plugin: the test installs it as a distribution on PYTHONPATH).
test-harness: $(HARNESS_STAMP)
	$(HARNESS_VENV)/bin/clevr-math demo
	$(HARNESS_VENV)/bin/clotho-aqa demo
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(HARNESS_VENV)/bin/python -m pytest -q -p no:cacheprovider \
		tests/test_lmms_eval_harness.py tests/test_lmms_eval_tasks.py tests/lmms_eval_plugin

# Not part of `make test` either (~2 GB, offline once installed); `make test` skips tests/train/.
# TRAIN_PYTEST_ARGS=-s prints each run's per-step loss and rewards (the lines BENCHMARKS.md quotes).
test-train: $(TRAIN_STAMP)
	HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 $(TRAIN_VENV)/bin/python -m pytest -q -p no:cacheprovider $(TRAIN_PYTEST_ARGS) tests/train

# Not part of `make test` either (~2.3 GB, offline once installed; `make test` skips tests/verl_train/):
# verl's own RLHFDataset, collate_fn and reward managers on both datasets' prompts exports.
test-verl: $(VERL_STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 $(VERL_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/verl_train

# Not part of `make test` (CI) either: ms-swift's own dataset loader, media loaders and reward call on
# our `swift` exports (tests/swift_train/; they skip themselves without ms-swift). Installs run under nice.
test-swift:
	nice -n 10 $(MAKE) $(SWIFT_STAMP)
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 nice -n 10 $(SWIFT_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/swift_train

# Not part of `make test` either (1.7 GB; tests/render/ skips itself there): renders small scenes
# with Blender's Cycles on the CPU, a few minutes on 2 cores.
test-render: $(RENDER_STAMP)
	CLEVR_RENDER_TESTS=1 CLEVR_BLENDER=$(CURDIR)/$(RENDER_VENV)/bin/python $(RENDER_VENV)/bin/python -m pytest -q \
		-p no:cacheprovider tests/render tests/test_clevr_blender_driver.py

clean:
	rm -rf $(VENV) $(LEGACY_VENV) $(AUDIO_VENV) $(TRAIN_VENV) $(HARNESS_VENV) $(VERL_VENV) $(SWIFT_VENV) $(RENDER_VENV) demo_output .pytest_cache
