# `make demo` and `make test` set up everything they need in a local venv.
VENV ?= .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,examples]'
	touch $@

.PHONY: demo test test-thorough bench lint
demo: $(VENV)/.installed
	$(PY) examples/quickstart.py $(DEMO_ARGS)

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) tools/line_budget.py

test: $(VENV)/.installed lint
	HYPOTHESIS_PROFILE=ci $(PY) -m pytest -q -p no:cacheprovider

test-thorough: $(VENV)/.installed
	HYPOTHESIS_PROFILE=thorough $(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) benchmarks/run_all.py
