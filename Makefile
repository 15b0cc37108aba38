# The two commands a newcomer needs (see README.md). Both install what is missing first.
# Every pip-installed command is run through the interpreter (`$(PYTHON) -m …`), never by name: on a machine whose
# Python comes from a version manager (pyenv) a freshly installed console script has no shim on PATH yet.
PYTHON ?= python3
export PYTHON

.PHONY: run test setup fresh-check

setup:
	@bash scripts/setup.sh

# ARGS go to `stripebench run` (e.g. `make run ARGS=--headless`).
run: setup
	$(PYTHON) -m stripebench_tui run checkout-migration $(ARGS)

# Also brings up a Docker engine for the Docker sandbox tests (stopped afterwards if it started one): scripts/test.sh.
test:
	@bash scripts/test.sh

# The README's set-up on a machine that shares nothing prepared with this one (a container from the offline Debian
# base image, a new virtualenv that is not on PATH), then a smoke set: scripts/fresh-check.sh.
fresh-check:
	@bash scripts/fresh-check.sh
