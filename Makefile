# Two entry points for a fresh machine: `make demo` and `make test`.
# The venv is rebuilt only when the packaging files change, so repeated runs are quick.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-legacy clean

$(STAMP): setup.cfg pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/clevr-math demo
	$(VENV)/bin/clotho-aqa demo

test: $(STAMP)
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) .venv-legacy demo_output .pytest_cache
