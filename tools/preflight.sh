#!/usr/bin/env bash
# `make test` runs this first: the suite starts a real PostgreSQL server (initdb), headless Chromium
# and Java (Spark in local mode). Say in one line what to install, exit 2, before minutes of installs.
set -uo pipefail
missing=()
packages=()
if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=("PostgreSQL (initdb)")
  packages+=(postgresql)
fi
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  missing+=(Chromium)
  packages+=(chromium)
fi
if ! command -v java >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/java" ]; then
  missing+=("Java 17+")
  packages+=(openjdk-17-jre-headless)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  list=$(printf '%s, ' "${missing[@]}")
  echo "make test needs ${list%, } (not found): apt-get install ${packages[*]}" >&2
  exit 2
fi
