# The two commands a newcomer runs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint-code clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The main job on the bundled examples: parse and lint both worked contracts
# with their catalogs.
demo: install
	$(BIN)/tscontract show examples/ohlcv_1m/contract.yaml
	$(BIN)/tscontract lint examples/ohlcv_1m/contract.yaml --catalog examples/ohlcv_1m/catalog.yaml
	$(BIN)/tscontract show examples/plant_sensor/contract.yaml
	$(BIN)/tscontract lint examples/plant_sensor/contract.yaml --catalog examples/plant_sensor/catalog.yaml

lint-code: install
	$(BIN)/ruff check src tests examples $(wildcard bench)
	$(BIN)/ruff format --check src tests

test: lint-code
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache src/*.egg-info
