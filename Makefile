# The two commands of the course (see README.md):
#   make lab    create the environment on first use, then open JupyterLab on notebooks/
#               (make lab TORCH=cpu|cuda picks the PyTorch build; JUPYTER_ARGS=... adds flags)
#   make test   create the environment if needed, then lint and run every test and notebook
#   make train / make generate PROMPT="..."   the command line, with small defaults (ARGS=...)
# and what CI (.ci/run) runs after them:
#   make test-browser    a real JupyterLab driven by headless Chromium: every widget notebook is
#                        run and its knobs turned (needs /usr/bin/chromium; screenshots/ gets pictures)
#   make test-widgets7   the widget tests with ipywidgets 7.7 (what Colab ships) in a second
#                        environment, .venv-widgets7
#   make test-site       build the course website, then open every page of both languages in
#                        headless Chromium (screenshots/site/ gets pictures)
#   make test-colab      the environment Colab preloads (tests/colab/colab-pins.txt, Colab's Python
#                        when this machine has it) in .venv-colab: the course installed as the
#                        notebooks' Colab cell does, no preloaded package changed, every notebook
#                        run top to bottom, and the widget tests
# and for authors:
#   make site            the course as a static website in site/_build/html, the Chinese
#                        edition under zh/ (offline; no notebook is executed; the API reference
#                        page is generated from the library's docstrings), published by
#                        .github/workflows/site.yml
#   make api-reference   preview that page as Markdown in site/_build/API_REFERENCE.md
#   make images          redraw every diagram into images/ and rewrite each notebook's roadmap
#                        cell (with its output: no kernel), Colab link and Going-deeper folding
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Which PyTorch the environment gets (tools/choose_torch.py decides and records it in
# $(VENV)/.torch): TORCH=cpu|cuda, empty = auto (Linux: CUDA if an NVIDIA driver is found, else
# the CPU build from PyTorch's CPU index; macOS: PyPI's build, with MPS). TORCH_SPEC (e.g.
# torch==2.13.0) installs exactly that requirement through pip's own index; .ci/run uses it to
# take the CPU wheel on the CI disk. Asking for another choice once $(VENV) exists is refused.
TORCH ?=
TORCH_SPEC ?=
# Extra flags for `jupyter lab`, e.g. JUPYTER_ARGS="--no-browser --ip=0.0.0.0 --port=8899".
JUPYTER_ARGS ?=
# Jupyter refuses to run as root (Docker, cloud VMs, WSL) unless told it may.
ROOT_FLAG := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)
# make train / make generate: a short CPU run (about half a minute) and a prompt from the textbook.
STEPS ?= 200
PROMPT ?= The key to a successful sale is
ARGS ?=
JOBS ?= 2
# One torch thread per test process: two xdist workers (and their notebook kernels) already
# fill CI's two cores, and oversubscribed threads make small tensor ops many times slower.
TEST_ENV := OMP_NUM_THREADS=$(or $(THREADS),1) MKL_NUM_THREADS=$(or $(THREADS),1)
VENV7 ?= .venv-widgets7
BIN7 := $(VENV7)/bin
# Colab ships ipywidgets 7.7.x; the course must work with it and with 8.x.
WIDGETS7_SPEC ?= ipywidgets>=7.7,<7.8

.PHONY: lab test test-lib test-browser test-widgets7 test-colab test-site site api-reference images lint env clean-env

# The order-only torch-check runs before every use of the environment: it refuses a TORCH or
# TORCH_SPEC that differs from the one $(VENV) was made with (and says how to switch).
$(BIN)/.installed: pyproject.toml | torch-check
	@echo "Creating $(VENV): PyTorch, the course library and JupyterLab (a few minutes)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python tools/choose_torch.py install --venv $(VENV) --torch "$(TORCH)" --spec "$(TORCH_SPEC)"
	$(BIN)/python -m pip install --quiet -e ".[lab,dev]"
	touch $@

.PHONY: torch-check train generate
torch-check:
	@$(PYTHON) tools/choose_torch.py check --venv $(VENV) --torch "$(TORCH)" --spec "$(TORCH_SPEC)"

env: $(BIN)/.installed

lab: $(BIN)/.installed
	@echo "Starting JupyterLab on notebooks/: open the http://127.0.0.1:...?token=... address it prints below (Ctrl-C stops it)"
	$(BIN)/jupyter lab --notebook-dir=notebooks $(ROOT_FLAG) $(JUPYTER_ARGS)

# The command line of README.md's "Command line" section, with small defaults.
train: $(BIN)/.installed
	$(BIN)/python -m transformer_course train --steps $(STEPS) $(ARGS)

generate: $(BIN)/.installed
	$(BIN)/python -m transformer_course generate "$(PROMPT)" $(ARGS)

lint: $(BIN)/.installed
	$(BIN)/ruff check lib tests notebooks benchmarks tools site conftest.py
	$(BIN)/ruff format --check lib tests tools benchmarks site conftest.py
	PYTHONPATH=lib $(BIN)/lint-imports --no-cache

# Everything but the browser: ruff, the library tests, the Colab and API checks, and nbval
# (strict) over every notebook, with a per-notebook time table at the end.
test: lint
	$(TEST_ENV) $(BIN)/python -m pytest -n $(JOBS) --dist loadscope -m "not browser and not site"

test-lib: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -m "not browser and not site" tests

test-browser: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -p no:xdist -m browser tests/test_browser.py

# The second environment: the library with ipywidgets 7.7 (what Colab ships) and the test tools.
# Every widget is built and every knob turned there in Python (tests/test_colab_widgets.py);
# the browser cannot do it: JupyterLab 4 does not render widgets of a 7.x kernel.
$(BIN7)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV7)
	$(BIN7)/python -m pip install --quiet --upgrade pip
	$(BIN7)/python tools/choose_torch.py install --venv $(VENV7) --torch "$(TORCH)" --spec "$(TORCH_SPEC)"
	$(BIN7)/python -m pip install --quiet -e . "$(WIDGETS7_SPEC)" "pytest>=8.0" "hypothesis>=6.100"
	touch $@

test-widgets7: $(BIN7)/.installed
	$(BIN7)/python -c "import ipywidgets; v = ipywidgets.__version__; print('ipywidgets', v); assert v.startswith('7.7'), v"
	$(TEST_ENV) $(BIN7)/python -m pytest -p no:cacheprovider -o addopts="" tests/test_widgets_*.py tests/test_colab_widgets.py

# The Colab-pinned environment: a CPU build of torch stands in for Colab's CUDA build, then the
# pins of Google's list and the test tools; the course itself is installed by the stage, the way
# the notebooks' Colab cell installs it (tests/colab/colab_stage.py). Colab runs Python 3.13;
# CI's offline disk has torch 2.13.0 only for its own python3, so that is the default. Where
# PyTorch's CPU index is reachable: make test-colab COLAB_PYTHON=python3.13 COLAB_TORCH=cpu.
VENVC ?= .venv-colab
BINC := $(VENVC)/bin
COLAB_PYTHON ?= $(PYTHON)
COLAB_TORCH ?=
COLAB_TORCH_SPEC ?= torch==2.13.0

$(BINC)/.installed: tests/colab/colab-pins.txt tests/colab/test-tools.txt
	rm -rf $(VENVC)
	$(COLAB_PYTHON) -m venv $(VENVC)
	$(BINC)/python -m pip install --quiet --upgrade pip
	$(BINC)/python tools/choose_torch.py install --venv $(VENVC) --torch "$(COLAB_TORCH)" --spec "$(COLAB_TORCH_SPEC)"
	$(BINC)/python -m pip install --quiet -r tests/colab/colab-pins.txt -r tests/colab/test-tools.txt
	touch $@

# PYTHONPATH is emptied: the notebooks and tests must use the installed course, not lib/.
test-colab: $(BINC)/.installed
	$(BINC)/python --version
	PYTHONPATH= $(BINC)/python tests/colab/colab_stage.py install
	PYTHONPATH= $(TEST_ENV) $(BINC)/python tests/colab/colab_stage.py notebooks --jobs $(JOBS)
	PYTHONPATH= $(TEST_ENV) $(BINC)/python -m pytest -p no:cacheprovider -o addopts="" tests/test_widgets_*.py tests/test_colab_widgets.py tests/test_colab_stage.py

# The website: Sphinx + MyST-NB + sphinx-book-theme (the docs extra, added to .venv on first
# use so that `make test` stays lean) over the stored notebooks; see site/course_site.py.
$(BIN)/.installed-docs: $(BIN)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $@

site: $(BIN)/.installed-docs
	$(BIN)/python site/course_site.py

test-site: site
	$(TEST_ENV) $(BIN)/python -m pytest -p no:xdist -m site tests/test_site.py

api-reference: $(BIN)/.installed
	$(BIN)/python tools/api_reference.py --output site/_build/API_REFERENCE.md

images: $(BIN)/.installed
	$(BIN)/python tools/images.py

clean-env:
	rm -rf $(VENV) $(VENV7) $(VENVC)
