# The two commands a newcomer needs (see README.md). Both install what is missing first.
# Every pip-installed command is run through the interpreter (`$(PYTHON) -m …`), never by name: on a machine whose
# Python comes from a version manager (pyenv) a freshly installed console script has no shim on PATH yet.
PYTHON ?= python3
export PYTHON

.PHONY: run test drills setup fresh-check

setup:
	@bash scripts/setup.sh

# ARGS go to `stripebench run` (e.g. `make run ARGS=--headless`).
run: setup
	$(PYTHON) -m stripebench_tui run checkout-migration $(ARGS)

# The suite without its long tier: no Docker engine or Ray needed (scripts/test.sh).
test:
	@bash scripts/test.sh

# The long tier (pytest marker `drill`): every environment validated end to end, real harnesses, Docker (an engine is
# brought up and stopped again), Ray, kill drills. CI runs it after `make test`.
drills:
	@STRIPEBENCH_TIER=drills bash scripts/test.sh

# The README's set-up on a machine that shares nothing prepared with this one (a container from the offline Debian
# base image, a new virtualenv that is not on PATH), then a smoke set: scripts/fresh-check.sh.
fresh-check:
	@bash scripts/fresh-check.sh
