# The two commands a newcomer needs (see README.md). Both install what is missing first.
PYTHON ?= python3
export PYTHON

.PHONY: run test setup

setup:
	@bash scripts/setup.sh

run: setup
	stripebench run checkout-migration

# Also brings up a Docker engine for the Docker sandbox tests (stopped afterwards if it started one): scripts/test.sh.
test:
	@bash scripts/test.sh
