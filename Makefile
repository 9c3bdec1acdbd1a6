# The two commands a newcomer runs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install tool-venvs demo test lint-code clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The main job on the bundled examples: lint both worked contracts, validate the
# good files (exit 0) and the bad ones (exit 1, a report of every violation; the
# leading '-' lets the demo go on), then catch the shares->lots incident with
# bounds profiled from history.
OHLCV := examples/ohlcv_1m
SENSOR := examples/plant_sensor
NOW := --now 2026-11-30T21:05:00Z
demo: install
	$(BIN)/tscontract lint $(OHLCV)/contract.yaml --catalog $(OHLCV)/catalog.yaml
	$(BIN)/tscontract lint $(SENSOR)/contract.yaml --catalog $(SENSOR)/catalog.yaml
	$(BIN)/tscontract validate $(OHLCV)/contract.yaml $(OHLCV)/data/good.csv --catalog $(OHLCV)/catalog.yaml $(NOW)
	-$(BIN)/tscontract validate $(OHLCV)/contract.yaml $(OHLCV)/data/bad.csv --catalog $(OHLCV)/catalog.yaml $(NOW)
	$(BIN)/tscontract validate $(SENSOR)/contract.yaml $(SENSOR)/data/good.csv --catalog $(SENSOR)/catalog.yaml $(NOW)
	-$(BIN)/tscontract validate $(SENSOR)/contract.yaml $(SENSOR)/data/bad_kpa.csv --catalog $(SENSOR)/catalog.yaml $(NOW)
	mkdir -p out
	$(BIN)/tscontract profile $(OHLCV)/contract.yaml $(OHLCV)/data/good.csv --out out/ohlcv_bounds.yaml
	-$(BIN)/tscontract validate $(OHLCV)/contract.yaml $(OHLCV)/data/bad_lots.csv --catalog $(OHLCV)/catalog.yaml \
		--bounds out/ohlcv_bounds.yaml $(NOW)
	rm -f out/warehouse.duckdb
	$(BIN)/tscontract ingest $(OHLCV)/contract.yaml $(OHLCV)/data/good.csv --store out/warehouse.duckdb \
		--catalog $(OHLCV)/catalog.yaml --reason late_trades $(NOW)
	$(BIN)/tscontract ingest $(SENSOR)/contract.yaml examples/mappings/historian_export.csv \
		--mapping examples/mappings/plant_historian.yaml --store out/warehouse.duckdb \
		--catalog $(SENSOR)/catalog.yaml --now 2026-11-30T12:00:00Z
	-$(BIN)/tscontract ingest $(SENSOR)/contract.yaml $(SENSOR)/data/bad_kpa.csv --store out/warehouse.duckdb \
		--catalog $(SENSOR)/catalog.yaml $(NOW)
	$(BIN)/tscontract corrections out/warehouse.duckdb
	$(BIN)/tscontract check-store $(OHLCV)/contract.yaml out/warehouse.duckdb --catalog $(OHLCV)/catalog.yaml $(NOW)
	$(BIN)/tscontract export dbt $(OHLCV)/contract.yaml --catalog $(OHLCV)/catalog.yaml -o out/export/dbt
	$(BIN)/tscontract export avro $(SENSOR)/contract.yaml -o out/export
	$(BIN)/tscontract diff $(OHLCV)/contract.yaml $(OHLCV)/contract.yaml

lint-code: install
	$(BIN)/ruff check src tests examples tools $(wildcard bench)
	$(BIN)/ruff format --check src tests

# isolated environments for the export proofs (cached outside the checkout)
tool-venvs:
	tools/venvs.sh

test: lint-code tool-venvs
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache src/*.egg-info
