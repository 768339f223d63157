# shellcheck shell=bash
# Sourced by bench/growth.sh and bench/burst.sh: the fake Apple on 127.0.0.1:$apple_port (its pid in apple_pid),
# a key for the JWTs linkout signs (the fake does not check them), and $work/config.json for a linkout on
# 127.0.0.1:$port with reporting on against the fake, landings on `/`, no rate limit.
# shellcheck disable=SC2154  # work, port and apple_port are the sourcing script's
python3 bench/fake_apple.py "$apple_port" &
# shellcheck disable=SC2034  # read by the sourcing script's cleanup
apple_pid=$!
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt >"$work/key.p8"
cp -r Public "$work/public"
cat >"$work/config.json" <<JSON
{
  "server": { "host": "127.0.0.1", "port": $port, "publicDir": "$work/public", "rateLimitPerSecond": 0,
    "maxConnectionsPerClient": 1024 },
  "logging": { "level": "warning" },
  "landing": { "paths": ["/"], "allowWithoutToken": true, "defaultBundleId": "com.example" },
  "apps": [ { "bundleId": "com.example", "appAppleId": 1234567890, "name": "Example", "seller": "Example",
    "returnURL": "https://example.com/open", "urlScheme": "example",
    "legal": { "terms": "https://example.com/terms", "privacy": "https://example.com/privacy",
      "refunds": "https://example.com/refunds", "imprint": "https://example.com/imprint",
      "supportEmail": "support@example.com" } } ],
  "apple": { "issuerId": "bench-issuer", "keyId": "BENCHKEY01", "privateKeyFile": "$work/key.p8",
    "productionURL": "http://127.0.0.1:$apple_port", "sandboxURL": "http://127.0.0.1:$apple_port" },
  "reporting": { "noLineItemAfterSeconds": 172800, "pollIntervalSeconds": 30 }
}
JSON
