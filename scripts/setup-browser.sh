#!/usr/bin/env bash
# The report's browser test opens the HTML page in Debian's Chromium (headless, driven by
# playwright-core, which downloads no browser of its own). Installs it when missing; needs root and
# Debian's package archive. RIG_CHROMIUM can point at another Chromium instead.
set -euo pipefail
if [ -n "${RIG_CHROMIUM:-}" ] && [ -x "${RIG_CHROMIUM}" ]; then exit 0; fi
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing: install Debian's chromium package (or set RIG_CHROMIUM to a Chromium binary)" >&2
  exit 1
fi
echo "[rig setup] installing Debian's chromium for the report's browser test"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium >/dev/null
