#!/usr/bin/env bash
# Build (or reuse) the isolated environments the export proofs run the real tools in
# (pandera, Great Expectations, dbt-duckdb, soda-core, datacontract-cli): each conflicts with the others or
# with the core's pins, so each gets its own venv from tools/requirements/NAME.txt.
# Environments are cached outside the checkout, keyed by the requirements' hash, and
# linked at .venvs/NAME for the tests. A venv is built where it stays (console scripts
# record their interpreter's path) and counts only once its .complete stamp is written.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TSCONTRACT_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tscontract-venvs}"
mkdir -p "$cache" "$root/.venvs"
for req in "$root"/tools/requirements/*.txt; do
  [ -e "$req" ] || continue
  name=$(basename "$req" .txt)
  hash=$(sha256sum "$req" | cut -c1-12)
  dir="$cache/$name-$hash"
  if [ ! -e "$dir/.complete" ]; then
    echo "building tool environment $name (cached in $dir)"
    rm -rf "$dir"
    python3 -m venv "$dir"
    "$dir/bin/python" -m pip install -q --upgrade pip
    "$dir/bin/python" -m pip install -q -r "$req"
    touch "$dir/.complete"
  fi
  ln -sfn "$dir" "$root/.venvs/$name"
done
