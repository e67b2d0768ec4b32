# The two commands of the course (see README.md):
#   make lab    create the environment on first use, then open JupyterLab on notebooks/
#   make test   create the environment if needed, then lint and run every test and notebook
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Set TORCH_SPEC (e.g. torch==2.13.0) to install a particular torch build first;
# .ci/run uses it to take the CPU build. Empty: pip picks the right one for you.
TORCH_SPEC ?=
JOBS ?= 2

.PHONY: lab test test-lib lint env clean-env

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH_SPEC),$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)")
	$(BIN)/python -m pip install --quiet -e ".[lab,dev]"
	touch $@

env: $(BIN)/.installed

lab: $(BIN)/.installed
	$(BIN)/jupyter lab --notebook-dir=notebooks

lint: $(BIN)/.installed
	$(BIN)/ruff check lib tests notebooks benchmarks tools

test: lint
	$(BIN)/python -m pytest -n $(JOBS) --dist loadscope

test-lib: $(BIN)/.installed
	$(BIN)/python -m pytest tests

clean-env:
	rm -rf $(VENV)
