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

.PHONY: demo test test-legacy clean

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

demo: $(STAMP)
	$(VENV)/bin/clevr-math demo
	$(VENV)/bin/clotho-aqa demo

test: $(STAMP) $(LEGACY_STAMP)
	$(PY) -m pytest -q

test-legacy: $(LEGACY_STAMP)
	$(LEGACY_VENV)/bin/python tests/legacy/check_legacy_script.py

clean:
	rm -rf $(VENV) $(LEGACY_VENV) demo_output .pytest_cache
