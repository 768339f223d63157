#!/usr/bin/env bash
# Installs what the browser tier needs, if missing, and is safe to run again: Debian's chromium and
# chromium-driver, a Python venv under .build/browser-venv with Selenium, and the axe-selenium-python 3.0.0 wheel
# (only for the axe-core 4.x script it bundles; the wheel itself targets Python 3.12 and is never installed).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=$here/.build/browser-venv
wheels=$here/.build/browser-wheels
selenium_version=4.51.0
axe_version=3.0.0

packages=(chromium chromium-driver python3-venv)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "setup-browser: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi

if ! "$venv/bin/python" -c "import selenium, sys; sys.exit(selenium.__version__ != '$selenium_version')" 2>/dev/null
then
  echo "setup-browser: creating $venv with selenium $selenium_version" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "selenium==$selenium_version"
fi

wheel=$wheels/axe_selenium_python-$axe_version-py3-none-any.whl
if [[ ! -f $wheel ]]; then
  echo "setup-browser: fetching axe-selenium-python $axe_version" >&2
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 \
    "axe-selenium-python==$axe_version" -d "$wheels"
fi
[[ -f $wheel ]] || { echo "setup-browser: $wheel is missing after the download" >&2; exit 1; }
