#!/usr/bin/env bash
# Create the virtual environment with the pinned dependencies (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"

python=""
for candidate in python3.13 python3.12 python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
     "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    python="$candidate"; break
  fi
done
if [ -z "$python" ]; then
  echo "Python 3.11 or newer is needed (for example: apt-get install python3 python3-venv)." >&2
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "Creating $VENV with $python"
  "$python" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[dev]"
touch "$VENV/.installed"
