#!/usr/bin/env bash
# Checks the Prometheus alerting rules (deploy/prometheus/alerts.yml) with promtool: their syntax, then their unit
# tests (alerts.test.yml). Installs Debian's `prometheus` package, which ships promtool, when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null; then
  echo "alerts: installing prometheus (for promtool)" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends prometheus
fi
promtool check rules deploy/prometheus/alerts.yml
promtool test rules deploy/prometheus/alerts.test.yml
