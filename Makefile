# The two commands a newcomer runs: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# the demo needs the core and the calendars extra only; the tests need the dev extras (pyspark, tools...)
CORE_STAMP := $(VENV)/.installed-core
STAMP := $(VENV)/.installed

.PHONY: install install-core tool-venvs demo test lint-code docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(CORE_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[calendars]'
	touch $(CORE_STAMP)

$(STAMP): pyproject.toml $(CORE_STAMP)
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(STAMP)

install-core: $(CORE_STAMP)

install: $(STAMP)

# The main job on the bundled examples: lint both worked contracts, validate the
# good files (one line each) and the bad ones (exit 1 and the failed checks; the
# `expect 1` wrapper asserts that exit code, so the demo fails if a bad file passes),
# then catch the shares->lots incident with bounds profiled from history, gate
# files into a DuckDB store and look at what it holds.
OHLCV := examples/ohlcv_1m
SENSOR := examples/plant_sensor
NOW := --now 2026-11-30T21:05:00Z
OUT ?= out
T := $(BIN)/tscontract
SHORT := --quiet --examples 1
define expect1
	@echo '$(strip $(1))'
	@sh -c '$(1); code=$$?; [ $$code -eq 1 ] || { echo "demo: expected exit 1, got $$code" >&2; exit 1; }'
endef
demo: install-core
	@echo "# lint both contracts (exit 0: warnings only)"
	$(T) lint $(OHLCV)/contract.yaml --catalog $(OHLCV)/catalog.yaml --format json >/dev/null
	$(T) lint $(SENSOR)/contract.yaml --catalog $(SENSOR)/catalog.yaml --format json >/dev/null
	@echo "# good files pass"
	$(T) validate $(OHLCV)/contract.yaml $(OHLCV)/data/good.csv --catalog $(OHLCV)/catalog.yaml $(NOW) $(SHORT)
	$(T) validate $(SENSOR)/contract.yaml $(SENSOR)/data/good.csv --catalog $(SENSOR)/catalog.yaml $(NOW) $(SHORT)
	@echo "# expected: exit 1 -- bad.csv breaks 13 clauses of the OHLCV contract"
	$(call expect1,$(T) validate $(OHLCV)/contract.yaml $(OHLCV)/data/bad.csv --catalog $(OHLCV)/catalog.yaml $(NOW) $(SHORT))
	@echo "# expected: exit 1 -- the kPa incident: pressures sent in kPa where the catalog says bar"
	$(call expect1,$(T) validate $(SENSOR)/contract.yaml $(SENSOR)/data/bad_kpa.csv --catalog $(SENSOR)/catalog.yaml $(NOW) $(SHORT))
	@mkdir -p $(OUT)
	$(T) profile $(OHLCV)/contract.yaml $(OHLCV)/data/good.csv --out $(OUT)/ohlcv_bounds.yaml
	@echo "# expected: exit 1 -- volume in lots instead of shares: every clause holds, history catches it"
	$(call expect1,$(T) validate $(OHLCV)/contract.yaml $(OHLCV)/data/bad_lots.csv --catalog $(OHLCV)/catalog.yaml \
		--bounds $(OUT)/ohlcv_bounds.yaml $(NOW) $(SHORT))
	@rm -f $(OUT)/warehouse.duckdb
	$(T) ingest $(OHLCV)/contract.yaml $(OHLCV)/data/good.csv --store $(OUT)/warehouse.duckdb \
		--catalog $(OHLCV)/catalog.yaml --reason late_trades $(NOW)
	$(T) ingest $(SENSOR)/contract.yaml examples/mappings/historian_export.csv \
		--mapping examples/mappings/plant_historian.yaml --store $(OUT)/warehouse.duckdb \
		--catalog $(SENSOR)/catalog.yaml --now 2026-11-30T12:00:00Z
	@echo "# expected: exit 1 -- the kPa batch is quarantined, nothing of it is published"
	$(call expect1,$(T) ingest $(SENSOR)/contract.yaml $(SENSOR)/data/bad_kpa.csv --store $(OUT)/warehouse.duckdb \
		--catalog $(SENSOR)/catalog.yaml $(NOW) --quiet)
	$(T) corrections $(OUT)/warehouse.duckdb
	$(T) check-store $(OHLCV)/contract.yaml $(OUT)/warehouse.duckdb --catalog $(OHLCV)/catalog.yaml $(NOW) --quiet
	$(T) export dbt $(OHLCV)/contract.yaml --catalog $(OHLCV)/catalog.yaml -o $(OUT)/export/dbt >/dev/null
	$(T) export avro $(SENSOR)/contract.yaml -o $(OUT)/export >/dev/null
	$(T) diff $(OHLCV)/contract.yaml $(OHLCV)/contract.yaml

lint-code: install
	$(BIN)/ruff check src tests examples tools $(wildcard bench)
	$(BIN)/ruff format --check src tests
	$(BIN)/lint-imports
	$(BIN)/mypy

# The documentation site (mkdocs.yml, pages in docs/) into site/, warnings as errors: a broken link or
# anchor, a page missing from the nav, a command the CLI reference cannot render fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir site

# isolated environments for the export proofs (cached outside the checkout)
tool-venvs:
	tools/venvs.sh

# PostgreSQL, Chromium and Java are checked first (tools/preflight.sh: one line, exit 2), before any install.
# The seed contracts (../shared/seed) are optional here: without them their tests skip with the reason;
# .ci/run sets TSCONTRACT_REQUIRE_SEED=1 so CI fails instead.
test:
	tools/preflight.sh
	$(MAKE) --no-print-directory lint-code docs tool-venvs
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache src/*.egg-info site
