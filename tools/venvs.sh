#!/usr/bin/env bash
# Build (or reuse) the isolated environments the export proofs run the real tools in
# (pandera, Great Expectations, dbt-duckdb, soda-core): each conflicts with the others or
# with the core's pins, so each gets its own venv from tools/requirements/NAME.txt.
# Environments are cached outside the checkout, keyed by the requirements' hash, and
# linked at .venvs/NAME for the tests.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TSCONTRACT_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tscontract-venvs}"
mkdir -p "$cache" "$root/.venvs"
for req in "$root"/tools/requirements/*.txt; do
  [ -e "$req" ] || continue
  name=$(basename "$req" .txt)
  hash=$(sha256sum "$req" | cut -c1-12)
  dir="$cache/$name-$hash"
  if [ ! -x "$dir/bin/python" ]; then
    echo "building tool environment $name (cached in $dir)"
    rm -rf "$dir.tmp"
    python3 -m venv "$dir.tmp"
    "$dir.tmp/bin/python" -m pip install -q --upgrade pip
    "$dir.tmp/bin/python" -m pip install -q -r "$req"
    mv "$dir.tmp" "$dir"
  fi
  ln -sfn "$dir" "$root/.venvs/$name"
done
