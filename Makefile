# The two commands a newcomer needs (see README.md). Both install what is missing first.
PYTHON ?= python3

.PHONY: run test setup

setup:
	@bash scripts/setup.sh

run: setup
	stripebench run checkout-migration

test: setup
	$(PYTHON) -m pytest -n 2 --durations=15
