#!/usr/bin/env bash
# The report's browser test opens the HTML page in Debian's Chromium (headless, driven by
# playwright-core, which downloads no browser of its own). Installs it when missing; needs root and
# Debian's package archive. RIG_CHROMIUM can point at another Chromium instead.
set -euo pipefail
if [ -n "${RIG_CHROMIUM:-}" ] && [ -x "${RIG_CHROMIUM}" ]; then exit 0; fi
if command -v chromium >/dev/null 2>&1; then exit 0; fi
source "$(dirname "$0")/debian-package.sh"
install_debian_package chromium "for the report's browser test" "chromium is missing: install Debian's chromium package (or set RIG_CHROMIUM to a Chromium binary)"
