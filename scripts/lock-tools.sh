#!/usr/bin/env bash
# Compiles tools/requirements.in and tools/peers.in into tools/requirements.lock and tools/peers.lock:
# every package pinned, each with PyPI's sha256 of every file of that release (all platforms), which
# scripts/setup-tools.cjs installs with pip's --require-hashes. The set of packages is resolved for the
# Python and platform this runs on (CPython 3.11 on Linux x86_64 for the committed locks).
#   bash scripts/lock-tools.sh                            the pins kept (only new lines in a .in resolved)
#   bash scripts/lock-tools.sh --upgrade                  every package to its newest allowed release
#   bash scripts/lock-tools.sh --upgrade-package moto     one package
# pip-compile (pip-tools, pinned below) runs from a throw-away virtualenv. It asks PyPI itself
# (RIG_LOCK_INDEX to change), never this machine's pip.conf or PIP_*INDEX*/PIP_FIND_LINKS: a local
# index may carry rebuilt files whose hashes are not PyPI's.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
unset PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_FIND_LINKS PIP_NO_INDEX PIP_CONSTRAINT
index=${RIG_LOCK_INDEX:-https://pypi.org/simple}
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --index-url "$index" pip-tools==7.5.2
compile() {
  local in=$1 out=$2
  shift 2
  # --allow-unsafe: a setuptools or pip some package depends on is pinned and hashed too, not left out.
  (cd tools && "$work/venv/bin/pip-compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
    --no-emit-index-url --no-emit-find-links --no-emit-trusted-host --index-url "$index" \
    --output-file "$out" "$@" "$in")
}
compile requirements.in requirements.lock "$@"
# The peers against the default's pins (peers.in says -c requirements.lock), so the two agree in one .venv.
compile peers.in peers.lock "$@"
echo "tools/requirements.lock: $(grep -c '==' tools/requirements.lock) packages; tools/peers.lock: $(grep -c '==' tools/peers.lock)"
