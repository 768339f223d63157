#!/usr/bin/env bash
# Walks the whole money loop against a running linkout with the demo provider, with curl only: a StoreKit-shaped
# landing with a fresh token, the checkout page, "Pay €29.99", the demo payment page, "Complete", and
# the result page. Prints each step; exits 1 if a step does not answer as it should.
#   scripts/demo-purchase.sh [BASE_URL] [PRODUCT] [CURRENCY]     (defaults: http://127.0.0.1:8080 pro.lifetime EUR)
set -euo pipefail
base=${1:-http://127.0.0.1:8080}
product=${2:-pro.lifetime}
currency=${3:-EUR}
here=$(cd "$(dirname "$0")/.." && pwd)
linkout=${LINKOUT_BIN:-$here/.build/release/linkout}
jar=$(mktemp)
trap 'rm -f "$jar"' EXIT
fail() { echo "demo-purchase: $*" >&2; exit 1; }
csrf_in() { grep -o 'name="csrf" value="[a-z2-7]*"' | head -1 | sed 's/.*value="//; s/"$//'; }

# A sandbox token: a demo payment takes no money, so only a sandbox token's purchase is reported to Apple.
landing=$("$linkout" simulate --url "$base" --sandbox)
checkout=$(curl -s -o /dev/null -w '%{redirect_url}' -c "$jar" -b "$jar" "$landing")
[[ $checkout == */checkout/* ]] || fail "the landing did not redirect to a checkout"
echo "landing  → $checkout"
csrf=$(curl -s -c "$jar" -b "$jar" "$checkout" | csrf_in)
[[ -n $csrf ]] || fail "the checkout page has no form"
payment=$(curl -s -o /dev/null -w '%{redirect_url}' -c "$jar" -b "$jar" \
  -d "csrf=$csrf&currency=$currency&product=$product" "$checkout")
[[ $payment == */pay/demo/* ]] || fail "continue to payment did not lead to the demo payment page ($payment)"
echo "checkout → $payment"
page=$(curl -s -c "$jar" -b "$jar" "$payment")
grep -q "nothing is charged" <<<"$page" || fail "the demo page does not say that nothing is charged"
result=$(curl -s -o /dev/null -w '%{redirect_url}' -c "$jar" -b "$jar" \
  -d "csrf=$(csrf_in <<<"$page")&action=complete" "$payment")
[[ $result == */done\?session_id=demo_* ]] || fail "completing the demo payment did not lead to its result"
echo "payment  → $result"
curl -s -b "$jar" "$result" | grep -q "Demo payment completed" || fail "the result page does not confirm the demo payment"
echo "result: Demo payment completed"
