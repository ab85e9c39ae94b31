# kubegpu developer entry points. `make demo` and `make test` set everything up from scratch.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test bench fgd-grid fgd-original lint-self clean docs fuzz

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev,loadbench]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kubegpu lint examples/ --exit-zero

lint-self: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint-self
	$(BIN)/python -m pytest -n 2 -p no:cacheprovider

CHECKOV := bench/.venv-checkov/bin/checkov

# checkov is a baseline for the lint benchmark only: its own venv, never a project dependency.
$(CHECKOV):
	$(PYTHON) -m venv bench/.venv-checkov
	bench/.venv-checkov/bin/python -m pip install --quiet checkov==3.3.30

bench: $(STAMP) $(CHECKOV)
	$(BIN)/python bench/run_all.py

# Every run the FGD authors published, replayed and compared with its row (about 20-40 minutes on two cores).
fgd-grid: $(STAMP)
	$(BIN)/python bench/fgd_grid.py --workers 2

# Builds the FGD authors' simulator from a fetched copy (FGD_SOURCE=DIR) with Go and times one experiment
# beside kubegpu's (the Go run takes about 40 minutes).
fgd-original: $(STAMP)
	$(BIN)/python bench/fgd_original.py $(if $(FGD_SOURCE),--source $(FGD_SOURCE),)

# Long seeded fuzz run of lint, fix and the webhook review (the suite runs a short one), then every hostile
# value at every path of every rule case table.
fuzz: $(STAMP)
	$(BIN)/python -m tests.reliability.fuzz --lint 20000 --fix 5000 --review 5000
	$(BIN)/python -m tests.reliability.fuzz --sweep

clean:
	rm -rf $(VENV) build *.egg-info

docs: $(STAMP)
	$(BIN)/python -m kubegpu.rules.docs docs/rules
