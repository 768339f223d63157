#!/usr/bin/env bash
# Builds the image, runs it on 127.0.0.1, waits for health, runs scripts/smoke.sh against it, stops it with
# SIGTERM and checks that it exited 0. Uses podman (rootful, with local base images; see README) or docker.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
engine=${CONTAINER_ENGINE:-$(command -v podman || command -v docker || true)}
[[ -n $engine ]] || { echo "container-smoke: neither podman nor docker is installed" >&2; exit 1; }
image=${CONTAINER_IMAGE:-localhost/linkout:smoke}
format=()
[[ $(basename "$engine") == podman ]] && format=(--format docker)  # keeps HEALTHCHECK in the image

echo "container-smoke: building $image with $(basename "$engine")"
"$engine" build "${format[@]}" -q -t "$image" . >/dev/null
size=$("$engine" image inspect --format '{{.Size}}' "$image")
echo "container-smoke: image size $((size / 1024 / 1024)) MB"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
container=$("$engine" run -d -p "127.0.0.1:$port:8080" -e LINKOUT_ADMIN_TOKEN=smoke-admin "$image")
cleanup() { "$engine" rm -f "$container" >/dev/null 2>&1 || true; }
trap cleanup EXIT

healthy=""
for _ in $(seq 1 100); do
  if curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; then healthy=yes; break; fi
  sleep 0.2
done
[[ -n $healthy ]] || { "$engine" logs "$container" >&2; echo "container-smoke: never became healthy" >&2; exit 1; }
if [[ $(basename "$engine") == podman ]]; then
  "$engine" healthcheck run "$container" && echo "container-smoke: HEALTHCHECK (linkout healthcheck) passes"
fi
[[ $("$engine" exec "$container" id -u) != 0 ]] && echo "container-smoke: runs as a non-root user"

scripts/smoke.sh "http://127.0.0.1:$port"

"$engine" stop -t 20 "$container" >/dev/null
code=$("$engine" inspect --format '{{.State.ExitCode}}' "$container")
if [[ $code != 0 ]]; then
  "$engine" logs "$container" >&2
  echo "container-smoke: exit code $code after SIGTERM (expected 0)" >&2
  exit 1
fi
echo "container-smoke: SIGTERM exit code 0"
"$engine" logs "$container" 2>&1 | grep -c '"message":"request"' | xargs -I{} echo "container-smoke: {} access log lines"
