"""Apps without a backend, tested from outside the Swift code (scripts/app-test.sh).

Against a running linkout on the demo provider: a purchase through the pages, then everything an app without a
backend does, over HTTP only. The app redeems the code from the return link, verifies the signed entitlement
with PyJWT and the published JWKS, and checks its entitlements later with the customer credential. A used code
is refused, guessed codes are throttled, a refund ends the entitlement at the next check, a rotated key still
verifies what it signed before the rotation, a revoked credential gets 401, and neither the code, the
credential nor the signing key appears in the server's log.

    python app_test.py --url URL --admin-token T --data-dir DIR --log FILE [--log FILE...] --linkout BINARY
"""

import argparse
import base64
import http.client
import json
import re
import secrets
import sqlite3
import subprocess
import sys
import urllib.parse

import jwt

BUNDLE_ID = "com.example"
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X)"


class Server:
    def __init__(self, url):
        parsed = urllib.parse.urlsplit(url)
        self.host, self.port = parsed.hostname, parsed.port

    def request(self, method, path, body=None, headers=None, client="198.51.100.1"):
        """One request on a fresh connection; `client` is the address the server sees (it trusts 127.0.0.1 as
        its proxy in this tier), so the throttles of one test client do not fall on the others."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            all_headers = {"X-Forwarded-For": client, **(headers or {})}
            data = None
            if isinstance(body, dict):
                data = json.dumps(body).encode()
                all_headers.setdefault("Content-Type", "application/json")
            elif body is not None:
                data = body.encode()
            connection.request(method, path, body=data, headers=all_headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def json(self, method, path, body=None, headers=None, client="198.51.100.1"):
        status, response_headers, raw = self.request(method, path, body, headers, client)
        return status, response_headers, json.loads(raw) if raw else None


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def header(headers, name):
    return next((value for key, value in headers.items() if key.lower() == name.lower()), None)


def demo_purchase(server, linkout, url):
    """Landing, checkout, demo payment, result page: returns the redemption code from the return link."""
    landing_url = subprocess.run(
        [linkout, "simulate", "--url", url, "--sandbox"], check=True, capture_output=True, text=True
    ).stdout.strip()
    landing = urllib.parse.urlsplit(landing_url)
    status, headers, _ = server.request("GET", (landing.path or "/") + "?" + landing.query)
    check(status == 303, f"landing answered {status}")
    checkout = header(headers, "Location")
    cookie = header(headers, "Set-Cookie").split(";")[0]
    _, _, page = server.request("GET", checkout, headers={"Cookie": cookie})
    csrf = re.search(rb'name="csrf" value="([a-z2-7]+)"', page).group(1).decode()
    form = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
    status, headers, _ = server.request(
        "POST", checkout, f"csrf={csrf}&currency=EUR&product=pro.lifetime", headers=form
    )
    check(status == 303, f"checkout post answered {status}")
    payment = header(headers, "Location")
    _, _, page = server.request("GET", payment, headers={"Cookie": cookie})
    csrf = re.search(rb'name="csrf" value="([a-z2-7]+)"', page).group(1).decode()
    status, headers, _ = server.request("POST", payment, f"csrf={csrf}&action=complete", headers=form)
    check(status == 303, f"demo payment answered {status}")
    _, _, result = server.request("GET", header(headers, "Location"), headers={"Cookie": cookie, "User-Agent": IPHONE})
    return re.search(rb"open\?code=([a-z2-7]{32})", result).group(1).decode()


def verify(entitlement, jwks, issuer):
    """What an app does offline: the key named by the header, from the JWKS it fetched; ES256 only; the audience
    is its own bundle ID."""
    kid = jwt.get_unverified_header(entitlement)["kid"]
    keys = {key.key_id: key for key in jwt.PyJWKSet.from_dict(jwks).keys}
    check(kid in keys, f"the JWKS does not publish {kid}")
    return jwt.decode(
        entitlement,
        keys[kid].key,
        algorithms=["ES256"],
        audience=BUNDLE_ID,
        issuer=issuer,
        options={"require": ["exp", "iat", "aud", "iss", "sub"]},
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--public-url", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--linkout", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--log", action="append", required=True)
    arguments = parser.parse_args()
    server = Server(arguments.url)
    admin = {"Authorization": "Bearer " + arguments.admin_token}
    app = "198.51.100.10"

    code = demo_purchase(server, arguments.linkout, arguments.url)

    # Redeem from the app: no bearer, the code is the credential.
    status, _, redeemed = server.json("POST", "/v1/app/redemptions", {"code": code}, client=app)
    check(status == 200, f"redemption answered {status}: {redeemed}")
    purchase_id = redeemed["purchase"]["purchaseId"]
    credential = redeemed["credential"]
    check(credential.startswith("lcr_") and len(credential) == 56, "the credential has the documented shape")
    status, headers, jwks = server.json("GET", "/.well-known/jwks.json")
    check(status == 200 and header(headers, "Content-Type") == "application/jwk-set+json", "the JWKS is served")
    claims = verify(redeemed["entitlement"], jwks, arguments.public_url)
    check(claims["sub"] == purchase_id and claims["productId"] == "pro.lifetime", f"claims: {claims}")
    check(claims["kind"] == "oneTime" and claims["environment"] == "sandbox" and claims["test"] is True, f"{claims}")
    check(claims["exp"] - claims["iat"] == 86_400, "the entitlement lives appEntitlements.lifetimeSeconds")
    # A forged entitlement (the claims changed, the signature kept) does not verify.
    header_part, payload, signature = redeemed["entitlement"].split(".")
    forged = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    forged["productId"] = "pro.everything"
    forged_payload = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    try:
        verify(f"{header_part}.{forged_payload}.{signature}", jwks, arguments.public_url)
        raise AssertionError("a forged entitlement verified")
    except jwt.InvalidSignatureError:
        pass
    print("app-test: redeemed from the app; the entitlement verifies with PyJWT and the JWKS")

    # A used code is refused, from the app that used it and from anyone else.
    status, _, body = server.json("POST", "/v1/app/redemptions", {"code": code}, client="198.51.100.11")
    check(status == 409 and body["error"]["code"] == "already_redeemed", f"a replay answered {status}: {body}")
    # Replayed from ever new addresses, the code itself is throttled.
    statuses = [
        server.request("POST", "/v1/app/redemptions", {"code": code}, {"Content-Type": "application/json"},
                       client=f"198.51.100.{20 + n}")[0]
        for n in range(6)
    ]
    check(statuses[:4] == [409] * 4 and statuses[-1] == 429, f"replays from many clients answered {statuses}")
    print("app-test: a used code is refused, and throttled after 5 refusals:", statuses)

    # Guessing codes: refused, then throttled for the guessing client.
    guesser = "203.0.113.7"
    answers = []
    for _ in range(12):
        guess = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz234567") for _ in range(32))
        status, headers, _ = server.request(
            "POST", "/v1/app/redemptions", {"code": guess}, {"Content-Type": "application/json"}, client=guesser
        )
        answers.append(status)
    check(answers[:10] == [404] * 10 and answers[10:] == [429, 429], f"guesses answered {answers}")
    check(header(headers, "Retry-After") is not None, "a throttled guess says when to retry")
    print("app-test: guessed codes answer 404, then 429 after 10:", answers)

    # Check later with the credential.
    bearer = {"Authorization": "Bearer " + credential}
    status, _, current = server.json("GET", "/v1/app/entitlements", headers=bearer, client=app)
    check(status == 200 and len(current["entitlements"]) == 1 and current["ended"] == [], f"{status}: {current}")
    verify(current["entitlements"][0]["entitlement"], jwks, arguments.public_url)
    status, _, _ = server.json("GET", "/v1/app/entitlements", headers={"Authorization": "Bearer lcr_" + "a" * 52})
    check(status == 401, f"an unknown credential answered {status}")

    # Rotation: the new key signs, the old one stays published, and what it signed still verifies.
    before_rotation = redeemed["entitlement"]
    old_kid = jwt.get_unverified_header(before_rotation)["kid"]
    status, _, rotated = server.json("POST", "/admin/signing-keys/rotate?publishAheadSeconds=0", headers=admin)
    check(status == 201 and rotated["kid"] != old_kid, f"rotation answered {status}: {rotated}")
    _, _, jwks = server.json("GET", "/.well-known/jwks.json")
    check({key["kid"] for key in jwks["keys"]} == {old_kid, rotated["kid"]}, f"published after rotation: {jwks}")
    verify(before_rotation, jwks, arguments.public_url)
    _, _, current = server.json("GET", "/v1/app/entitlements", headers=bearer, client=app)
    after_rotation = current["entitlements"][0]["entitlement"]
    check(jwt.get_unverified_header(after_rotation)["kid"] == rotated["kid"], "the new key signs")
    verify(after_rotation, jwks, arguments.public_url)
    status, _, refusal = server.json("POST", f"/admin/signing-keys/{old_kid}/retire", headers=admin)
    check(status == 409 and refusal["error"]["code"] == "key_in_use", f"retiring too early answered {status}")
    listed = subprocess.run(
        [arguments.linkout, "keys", "list", "--config", arguments.config, "--data-dir", arguments.data_dir],
        check=True, capture_output=True, text=True,
    ).stdout
    check(old_kid in listed and rotated["kid"] in listed, f"linkout keys list: {listed}")
    print("app-test: after a rotation the old entitlement still verifies, the new key signs")

    # A refund ends the entitlement at the next check.
    status, _, refunded = server.json("POST", f"/admin/demo/purchases/{purchase_id}/refund", headers=admin)
    check(status == 200 and refunded["status"] == "refunded", f"the demo refund answered {status}: {refunded}")
    _, _, current = server.json("GET", "/v1/app/entitlements", headers=bearer, client=app)
    check(current["entitlements"] == [], f"still entitled after the refund: {current}")
    check(current["ended"] == [{"purchaseId": purchase_id, "productId": "pro.lifetime", "reason": "refunded"}],
          f"{current}")
    print("app-test: entitled -> refund -> not entitled")

    # The operator revokes the credential and issues a new one (a person on a new device).
    credential_id = redeemed["credentialId"]
    status, _, revoked = server.json("POST", f"/admin/credentials/{credential_id}/revoke", headers=admin)
    check(status == 200 and revoked["revokedAt"] is not None, f"revoke answered {status}")
    status, _, body = server.json("GET", "/v1/app/entitlements", headers=bearer, client=app)
    check(status == 401 and body["error"]["code"] == "credential_revoked", f"a revoked credential answered {status}")
    reissued = subprocess.run(
        [arguments.linkout, "credentials", "reissue", credential_id, "--config", arguments.config,
         "--data-dir", arguments.data_dir],
        check=True, capture_output=True, text=True,
    ).stdout
    fresh = re.search(r"secret \(shown once\): (lcr_[a-z2-7]{52})", reissued).group(1)
    status, _, current = server.json("GET", "/v1/app/entitlements", headers={"Authorization": "Bearer " + fresh},
                                     client=app)
    check(status == 200 and current["ended"][0]["purchaseId"] == purchase_id, f"the reissued credential: {status}")
    print("app-test: a revoked credential gets 401; the reissued one works")

    # Nothing secret in the log: the code, the credentials, the signing keys' private halves, the entitlements.
    ledger = sqlite3.connect(f"file:{arguments.data_dir}/linkout.sqlite?mode=ro", uri=True)
    private_keys = [row[0] for row in ledger.execute("SELECT private_key FROM signing_keys WHERE private_key IS NOT NULL")]
    ledger.close()
    check(len(private_keys) == 2, "both generated keys are in the ledger")
    key_lines = [line for pem in private_keys for line in pem.splitlines() if "-----" not in line and len(line) > 16]
    log = "".join(open(path, encoding="utf-8", errors="replace").read() for path in arguments.log)
    check("redeemed by the app" in log, "the log has the redemption (so it was searched)")
    for secret in [code, code.upper(), credential, fresh, before_rotation, after_rotation, *key_lines]:
        check(secret not in log, "a secret appeared in the log")
    check('"level":"error"' not in log and '"level":"critical"' not in log, "the server logged errors")
    print("app-test: neither the code, the credentials, the keys nor the entitlements are in the log")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"app-test: FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
