#!/usr/bin/env bash
# Builds the wirespeed wheel (what `pip install wirespeed` installs) into OUT_DIR (default dist/), from a clean copy of
# what the wheel ships: setuptools would otherwise reuse a stale build/ or *.egg-info and ship files that no longer
# exist in components/. Uses $UV (the Makefile passes the uv it installed), else uv on PATH; build dependencies
# (pyproject.toml's [build-system]) come from PyPI.
#
#   scripts/build-wheel.sh [OUT_DIR]      # prints the wheel's path
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-$root/dist}" && cd "${1:-$root/dist}" && pwd)
uv=${UV:-$(command -v uv || true)}
if [ -z "$uv" ]; then
  echo "build-wheel: needs uv (make bootstraps it; or python3 -m pip install uv)" >&2
  exit 1
fi
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
tar -C "$root" -cf - --exclude='*.egg-info' --exclude=__pycache__ pyproject.toml README.md components | tar -C "$src" -xf -
"$uv" build --quiet --wheel --out-dir "$src/dist" "$src"
wheel=$(find "$src/dist" -name 'wirespeed-*.whl')
mv -f "$wheel" "$out/"
echo "$out/$(basename "$wheel")"
