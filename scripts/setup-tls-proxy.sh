#!/usr/bin/env bash
# The connection tests (test/foundation/temporal-tls.test.ts) put a real TLS endpoint in front of the
# dev server: Debian's stunnel (TLS, optionally requiring a client certificate, then plain TCP to the
# dev server's gRPC port; gRPC over h2c passes through untouched). Installs it when missing; needs
# root and Debian's package archive. RIG_STUNNEL can point at another stunnel binary instead.
set -euo pipefail
if [ -n "${RIG_STUNNEL:-}" ] && [ -x "${RIG_STUNNEL}" ]; then exit 0; fi
if command -v stunnel4 >/dev/null 2>&1 || command -v stunnel >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "stunnel is missing: install Debian's stunnel4 package (or set RIG_STUNNEL to a stunnel binary)" >&2
  exit 1
fi
echo "[rig setup] installing Debian's stunnel4 for the TLS connection tests"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends stunnel4 >/dev/null
