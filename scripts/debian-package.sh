#!/usr/bin/env bash
# Sourced by the setup:* scripts: installs one Debian package a test needs, or says how to get it.
# install_debian_package PACKAGE WHY MISSING_HINT
#   as root with apt-get: installs PACKAGE quietly, saying WHY; otherwise exits 1 with MISSING_HINT.
install_debian_package() {
  local package="$1" why="$2" hint="$3"
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "$hint" >&2
    exit 1
  fi
  echo "[rig setup] installing Debian's ${package} ${why}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$package" >/dev/null
}
