#!/usr/bin/env bash
# Create the two peer virtualenvs beside this script. Idempotent: a venv whose
# stamp file exists and whose packages import is left alone.
#
#   bench/.venv-pandera   pandera + pandas + pyarrow
#   bench/.venv-gx        great_expectations + pandas + pyarrow
#   bench/.venv-pandera-polars  pandera's polars backend + polars
#   bench/.venv-dataframely     dataframely + polars
#
# pandera, Great Expectations and the polars peers pin overlapping dependencies
# differently, so each gets its own interpreter; bench/run.py calls each peer with its own.
# The tscontract and handwritten-SQL peers (and the generator) run in the
# project venv, /work/main/.venv (created by `make install`).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$BENCH")"
PYTHON="${PYTHON:-python3}"

make_venv() {
  local dir="$1" probe="$2"
  shift 2
  if [[ -f "$dir/.installed" ]] && "$dir/bin/python" -c "$probe" 2>/dev/null; then
    echo "ok: $dir"
    return
  fi
  echo "creating $dir: $*"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --upgrade pip
  "$dir/bin/python" -m pip install -q "$@"
  "$dir/bin/python" -c "$probe"
  touch "$dir/.installed"
}

# The project venv: generator, handwritten SQL and tscontract peers.
if [[ ! -x "$REPO/.venv/bin/python" ]]; then
  make -C "$REPO" install
fi
# numpy is needed by bench/generate.py only; tscontract itself does not depend on it.
# exchange-calendars (an optional dependency of tscontract, in its dev extra) gives the
# generator its XNAS sessions and the tscontract peer its session check.
if ! "$REPO/.venv/bin/python" -c "import numpy, pyarrow, duckdb, exchange_calendars" 2>/dev/null; then
  "$REPO/.venv/bin/python" -m pip install -q numpy pyarrow duckdb "exchange-calendars>=4.5"
fi
echo "ok: $REPO/.venv"

make_venv "$BENCH/.venv-pandera" "import pandera.pandas, pandas, pyarrow" \
  "pandera>=0.20" "pandas>=2.2" "pyarrow>=15"
make_venv "$BENCH/.venv-gx" "import great_expectations as gx; assert gx.__version__.startswith('1.')" \
  "great_expectations>=1.0,<2" "pandas>=2.2" "pyarrow>=15"
make_venv "$BENCH/.venv-pandera-polars" "import pandera.polars, polars" \
  "pandera[polars]>=0.20" "polars>=1.0"
make_venv "$BENCH/.venv-dataframely" "import dataframely, polars" \
  "dataframely>=1.0" "polars>=1.0"
