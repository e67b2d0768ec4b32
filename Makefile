# The two commands of the course (see README.md):
#   make lab    create the environment on first use, then open JupyterLab on notebooks/
#               (make lab TORCH=cpu|cuda picks the PyTorch build; JUPYTER_ARGS=... adds flags)
#   make test   create the environment if needed, then lint and run every test and notebook
#   make train / make generate PROMPT="..."   the command line, with small defaults (ARGS=...)
# and what CI (.ci/run) runs after them, each for what no other stage catches:
#   make test-chromium   one Chromium stage: make site, then test-browser's and test-site's
#                        tests in one pytest run over $(JOBS) workers
#     make test-browser  a real JupyterLab driven by headless Chromium: every notebook with a
#                        knob is run and its knobs turned, and 11 runs for its live training
#                        display; the others open with their stored outputs (needs
#                        /usr/bin/chromium; screenshots/ gets pictures). Alone catches: a widget that does not render or react in a
#                        real front end (ipywidgets 8), a picture that does not load, a Going-deeper
#                        section that is not folded, a console error, a request leaving the machine.
#     make test-site     build the course website, then open every page of both languages in
#                        headless Chromium (screenshots/site/ gets pictures). Alone catches: a
#                        broken page, link, equation or search of the published site.
#   make test-colab      the environment Colab preloads (tests/colab/colab-pins.txt, Colab's Python
#                        when this machine has it) in .venv-colab: the course installed as the
#                        notebooks' Colab cell does, no preloaded package changed, every English
#                        notebook run top to bottom, and every widget built and every knob turned
#                        under ipywidgets 7.7 in Python. Alone catches: a notebook or widget that
#                        breaks on Colab's older versions (ipywidgets 7.7, IPython 7.34, ...), a
#                        file the installed package lacks, an install that upgrades Colab's packages.
#   make test alone catches what the others leave out: lint and layering, the library tests,
#   and strict nbval over both editions (the only check that stored outputs are current).
# and for maintainers (not in CI):
#   make lock            requirements/lock.txt anew (uv pip compile; see LOCK below)
#   make test-latest     make test in .venv-latest with the newest versions pyproject.toml allows
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
# TORCH_INDEX: a mirror of PyTorch's CPU index (https://download.pytorch.org/whl/cpu) for networks
# where that host is slow or blocked; README.zh-CN.md lists mirrors. When the CPU index does not
# answer, choose_torch.py stops and says how to choose: it never falls back to the CUDA build.
# pip's own index for everything else: PIP_INDEX_URL=... or `pip config set global.index-url ...`.
TORCH_INDEX ?=
# Extra flags for `jupyter lab`, e.g. JUPYTER_ARGS="--no-browser --ip=0.0.0.0 --port=8899".
JUPYTER_ARGS ?=
# Jupyter refuses to run as root (Docker, cloud VMs, WSL) unless told it may.
ROOT_FLAG := $(if $(filter 0,$(shell id -u 2>/dev/null)),--allow-root)
# make train / make generate: a short CPU run (about half a minute) and a prompt from the textbook.
STEPS ?= 200
PROMPT ?= The key to a successful sale is
ARGS ?=
JOBS ?= 2
# CI and `make test` install every package but torch at the version requirements/lock.txt pins
# (uv pip compile over pyproject.toml and its extras: `make lock` refreshes it), so a new release
# of any dependency changes nothing until the lock does. The lock is a constraints file (pip -c):
# it fixes versions, it never adds a package. Learners who `pip install` the course keep
# pyproject.toml's ranges; `make test-latest` runs the suite on the newest versions they allow.
LOCK ?= requirements/lock.txt
# pip itself is no dependency of the project, so the lock leaves it out: pinned here, so that a
# new pip (its resolver, its warnings) reaches CI only when this line changes.
PIP_SPEC ?= pip==26.3
LOCK_FLAG := $(if $(LOCK),-c $(LOCK))
# One torch thread per test process: two xdist workers (and their notebook kernels) already
# fill CI's two cores, and oversubscribed threads make small tensor ops many times slower.
TEST_ENV := OMP_NUM_THREADS=$(or $(THREADS),1) MKL_NUM_THREADS=$(or $(THREADS),1)

.PHONY: lab test test-lib test-browser test-chromium test-colab test-latest lock test-site site api-reference images lint env clean-env

# The order-only torch-check runs before every use of the environment: it refuses a TORCH or
# TORCH_SPEC that differs from the one $(VENV) was made with (and says how to switch).
$(BIN)/.installed: pyproject.toml $(LOCK) | torch-check
	@echo "Creating $(VENV): PyTorch, the course library and JupyterLab (a few minutes)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet "$(PIP_SPEC)"
	$(BIN)/python tools/choose_torch.py install --venv $(VENV) --torch "$(TORCH)" --spec "$(TORCH_SPEC)" --index "$(TORCH_INDEX)"
	$(BIN)/python -m pip install --quiet -e ".[lab,dev]" $(LOCK_FLAG)
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
	COURSE_LOCK=$(LOCK) $(TEST_ENV) $(BIN)/python -m pytest -n $(JOBS) --dist loadscope -m "not browser and not site"

test-lib: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -m "not browser and not site" tests

test-browser: $(BIN)/.installed
	$(TEST_ENV) $(BIN)/python -m pytest -p no:xdist -m browser tests/test_browser.py

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
# Colab's own pins fix what Colab preloads; the rest of that environment (the test tools and what
# the pins and the course pull in) is locked here, made by `make lock` from the same files.
COLAB_LOCK ?= tests/colab/colab-lock.txt

$(BINC)/.installed: tests/colab/colab-pins.txt tests/colab/test-tools.txt $(COLAB_LOCK)
	rm -rf $(VENVC)
	$(COLAB_PYTHON) -m venv $(VENVC)
	$(BINC)/python -m pip install --quiet "$(PIP_SPEC)"
	$(BINC)/python tools/choose_torch.py install --venv $(VENVC) --torch "$(COLAB_TORCH)" --spec "$(COLAB_TORCH_SPEC)"
	$(BINC)/python -m pip install --quiet -r tests/colab/colab-pins.txt -r tests/colab/test-tools.txt $(if $(COLAB_LOCK),-c $(COLAB_LOCK))
	touch $@

# PYTHONPATH is emptied: the notebooks and tests must use the installed course, not lib/.
test-colab: $(BINC)/.installed
	$(BINC)/python --version
	PYTHONPATH= $(BINC)/python tests/colab/colab_stage.py install
	PYTHONPATH= $(TEST_ENV) $(BINC)/python tests/colab/colab_stage.py notebooks --jobs $(JOBS)
	PYTHONPATH= $(TEST_ENV) $(BINC)/python -m pytest -p no:cacheprovider -o addopts="" tests/test_widgets_*.py tests/test_colab_widgets.py tests/test_colab_stage.py

# The website: Sphinx + MyST-NB + sphinx-book-theme (the docs extra, added to .venv on first
# use so that `make test` stays lean) over the stored notebooks; see site/course_site.py.
$(BIN)/.installed-docs: $(BIN)/.installed pyproject.toml $(LOCK)
	$(BIN)/python -m pip install --quiet -e ".[docs]" $(LOCK_FLAG)
	touch $@

site: $(BIN)/.installed-docs
	$(BIN)/python site/course_site.py

test-site: site
	$(TEST_ENV) $(BIN)/python -m pytest -p no:xdist -m site tests/test_site.py

# Two workers, each with its own JupyterLab (free port, temporary folders) and Chromium: while one
# kernel trains in 11 or 13, the other core runs the next notebook (worksteal: the long ones do
# not queue behind each other).
test-chromium: site
	$(TEST_ENV) $(BIN)/python -m pytest -n $(JOBS) --dist worksteal -m "browser or site" tests/test_browser.py tests/test_site.py

api-reference: $(BIN)/.installed
	$(BIN)/python tools/api_reference.py --output site/_build/API_REFERENCE.md

images: $(BIN)/.installed
	$(BIN)/python tools/images.py

# requirements/lock.txt anew: the newest versions pyproject.toml allows, for every platform and
# Python it supports, torch left to tools/choose_torch.py (pinned for CI in requirements/torch.txt);
# and the Colab stage's lock: Colab's pins as they are, the newest of everything else.
lock: $(BIN)/.installed
	$(BIN)/uv pip compile pyproject.toml --extra lab --extra dev --extra docs --universal --python-version 3.10 -c requirements/torch.txt --no-emit-package torch --upgrade --quiet -o requirements/lock.txt
	$(BIN)/uv pip compile tests/colab/colab-pins.txt tests/colab/test-tools.txt pyproject.toml --universal --python-version 3.11 -c requirements/torch.txt --no-emit-package torch --upgrade --quiet -o tests/colab/colab-lock.txt

# Drift on purpose, not by surprise: a fresh second environment with the newest versions
# pyproject.toml allows (no lock), then the whole of `make test` there. Not in CI.
VENVL ?= .venv-latest
test-latest:
	rm -rf $(VENVL)
	$(MAKE) test VENV=$(VENVL) LOCK=
	$(VENVL)/bin/python -m pip freeze --exclude-editable > $(VENVL)/versions.txt
	@echo "make test passed with the newest allowed versions: $(VENVL)/versions.txt lists them"

clean-env:
	rm -rf $(VENV) $(VENVC) $(VENVL)
