# The two commands of the course (see README.md):
#   make lab    create the environment on first use, then open JupyterLab on notebooks/
#   make test   create the environment if needed, then lint and run every test and notebook
# and what CI (.ci/run) runs after them:
#   make test-browser    a real JupyterLab driven by headless Chromium: every widget notebook is
#                        run and its knobs turned (needs /usr/bin/chromium; screenshots/ gets pictures)
#   make test-widgets7   the widget tests with ipywidgets 7.7 (what Colab ships) in a second
#                        environment, .venv-widgets7
# and for authors:
#   make api-reference   rewrite API_REFERENCE.md from the library's docstrings
#   make images          redraw every diagram into images/ and refresh each notebook's roadmap cell
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Set TORCH_SPEC (e.g. torch==2.13.0) to install a particular torch build first;
# .ci/run uses it to take the CPU build. Empty: pip picks the right one for you.
TORCH_SPEC ?=
JOBS ?= 2
# One torch thread per test process: two xdist workers (and their notebook kernels) already
# fill CI's two cores, and oversubscribed threads make small tensor ops many times slower.
TEST_ENV := OMP_NUM_THREADS=$(or $(THREADS),1) MKL_NUM_THREADS=$(or $(THREADS),1)
VENV7 ?= .venv-widgets7
BIN7 := $(VENV7)/bin
# Colab ships ipywidgets 7.7.x; the course must work with it and with 8.x.
WIDGETS7_SPEC ?= ipywidgets>=7.7,<7.8

.PHONY: lab test test-lib test-browser test-widgets7 api-reference images lint env clean-env

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
	$(BIN)/ruff check lib tests notebooks benchmarks tools conftest.py

# Everything but the browser: ruff, the library tests, the Colab and API checks, and nbval
# (strict) over every notebook, with a per-notebook time table at the end.
test: lint
	$(TEST_ENV) $(BIN)/python -m pytest -n $(JOBS) --dist loadscope -m "not browser"

test-lib: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -m "not browser" tests

test-browser: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -p no:xdist -m browser tests/test_browser.py

# The second environment: the library with ipywidgets 7.7 (what Colab ships) and the test tools.
# Every widget is built and every knob turned there in Python (tests/test_colab_widgets.py);
# the browser cannot do it: JupyterLab 4 does not render widgets of a 7.x kernel.
$(BIN7)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV7)
	$(BIN7)/python -m pip install --quiet --upgrade pip
	$(if $(TORCH_SPEC),$(BIN7)/python -m pip install --quiet "$(TORCH_SPEC)")
	$(BIN7)/python -m pip install --quiet -e . "$(WIDGETS7_SPEC)" "pytest>=8.0" "hypothesis>=6.100"
	touch $@

test-widgets7: $(BIN7)/.installed
	$(BIN7)/python -c "import ipywidgets; v = ipywidgets.__version__; print('ipywidgets', v); assert v.startswith('7.7'), v"
	$(TEST_ENV) $(BIN7)/python -m pytest -p no:cacheprovider -o addopts="" tests/test_widgets_*.py tests/test_colab_widgets.py

api-reference: $(BIN)/.installed
	$(BIN)/python tools/api_reference.py

images: $(BIN)/.installed
	$(BIN)/python tools/images.py

clean-env:
	rm -rf $(VENV) $(VENV7)
