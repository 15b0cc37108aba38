# The two commands a newcomer needs (see README.md). Both install what is missing first.
PYTHON ?= python3

.PHONY: run test setup

setup:
	@bash scripts/setup.sh

run: setup
	stripebench replay replays/checkout-migration-pass.jsonl

test: setup
	$(PYTHON) -m pytest -n 2 --durations=15
