#!/usr/bin/env bash
# Installs the Debian packages linkout builds against, if any is missing. Safe to run again.
set -euo pipefail

# postgresql: the tests' throwaway server (libpq-dev builds the PostgreSQL engine either way).
packages=(libcurl4-openssl-dev libsqlite3-dev libssl-dev libpq-dev postgresql pkg-config curl openssl)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
command -v swift >/dev/null || { echo "setup: the Swift toolchain (6.0 or later) must be on PATH" >&2; exit 1; }
