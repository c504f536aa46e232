#!/usr/bin/env bash
# The service files of test/compat that a registry serves: apipod's own test services, from
# its source distributions on PyPI, extracted into test/.compat-sources/<service>/ (ignored by
# git: they are the toolkit's code, GPL-3.0, and not part of this repository). Safe to run twice.
set -euo pipefail
cd "$(dirname "$0")/../.."

sources=test/.compat-sources
python=test/.venv-toolkit/bin/python
download=$(mktemp -d)
trap 'rm -rf "$download"' EXIT

# service directory, pinned release, path inside its sdist
while read -r service release path; do
  [[ -f "$sources/$service/$(basename "$path")" ]] && continue
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary :all: --dest "$download" "$release"
  archive=$(ls "$download"/*.tar.gz | head -n 1)
  mkdir -p "$sources/$service"
  tar -xzf "$archive" -C "$download"
  cp "$download/$(basename "$archive" .tar.gz)/$path" "$sources/$service/"
  rm -rf "${download:?}"/*
done <<'LIST'
demo-pypi-1.0.1 apipod==1.0.1 test/test_demo_fastapi.py
demo-pypi-1.0.2 apipod==1.0.2 test/test_demo_fastapi.py
demo-pypi-1.0.4 apipod==1.0.4 test/test_demo_fastapi.py
core-functionalities-pypi-1.0.4 apipod==1.0.4 test/test_core_functionalities.py
LIST
echo "compat sources: $(find "$sources" -type f | wc -l) service file(s) in $sources"
