# shellcheck shell=bash
# Sourced by the benchmarks: `install_missing NAME...` installs from Debian each named package whose command of
# the same name is missing (on the PATH or in /usr/sbin, where nginx lives).
install_missing() {
  local name missing=() sudo=""
  for name in "$@"; do
    command -v "$name" >/dev/null || [[ -x /usr/sbin/$name ]] || missing+=("$name")
  done
  ((${#missing[@]})) || return 0
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
}
