"""A fake Paddle Billing for the browser tier: the API linkout's checkout and background processor call
(`POST /transactions`, `GET /transactions/{id}?include=address`, `GET /transactions`) and a hosted checkout page.
Its pay button does what Paddle does once a card is charged: it sends the signed `transaction.completed`
notification to linkout's `POST /webhooks/paddle`, then sends the person to linkout's `/pay/return`.

    fake_paddle.py --api-key KEY --secret NOTIFICATION_SECRET --linkout-url-file FILE --cert PEM --key PEM

Prints `fake paddle listening on http://127.0.0.1:PORT` (the API) and `fake paddle checkout on
https://127.0.0.1:PORT` (the hosted checkout: linkout sends people only to https payment pages; the certificate is
self-signed) once it listens; linkout's address is read from FILE when a payment is made (linkout starts after
this, pointed at it)."""

import argparse
import datetime
import hashlib
import hmac
import html
import json
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DAY = 86_400


def paddle_time(seconds):
    """RFC 3339 in UTC with microseconds, as Paddle writes times."""
    moment = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


class Paddle:
    def __init__(self, api_key, secret, linkout_url_file):
        self.api_key = api_key
        self.secret = secret
        self.linkout_url_file = linkout_url_file
        self.transactions = {}
        self.lock = threading.Lock()

    def linkout_url(self):
        with open(self.linkout_url_file) as file:
            return file.read().strip().rstrip("/")

    def create(self, body):
        items = body.get("items") or []
        custom = body.get("custom_data")
        if len(items) != 1 or not isinstance(custom, dict) or not custom:
            return 400, {"error": {"type": "request_error", "code": "bad_request", "detail": "one item expected"}}
        price = items[0].get("price") or {}
        amount = (price.get("unit_price") or {}).get("amount", "0")
        with self.lock:
            transaction = {
                "id": f"txn_01browser{len(self.transactions) + 1}",
                "currency": body.get("currency_code", "USD"),
                "amount": amount,
                "custom": custom,
                "subscription": price.get("billing_cycle") is not None,
            }
            self.transactions[transaction["id"]] = transaction
        return 201, {"data": self.entity(transaction, with_address=False), "meta": {"request_id": "fake"}}

    def entity(self, transaction, with_address):
        amount = transaction["amount"]
        data = {
            "id": transaction["id"], "status": "ready", "origin": "api", "currency_code": transaction["currency"],
            "custom_data": transaction["custom"], "customer_id": None, "address_id": None,
            "subscription_id": None, "billing_period": None,
            "details": {"totals": {
                "subtotal": amount, "tax": "0", "total": amount, "grand_total": amount, "grand_total_tax": "0",
                "currency_code": transaction["currency"],
            }},
        }
        if with_address:
            data["address"] = {"id": "add_01fake", "country_code": "DE"}
        return data

    def completed(self, transaction):
        """The notification Paddle sends once the transaction is paid: tax included, 19 % of it tax."""
        now = int(time.time())
        total = int(transaction["amount"])
        tax = total * 19 // 119
        period = None
        if transaction["subscription"]:
            period = {"starts_at": paddle_time(now), "ends_at": paddle_time(now + 30 * DAY)}
        totals = {"subtotal": str(total - tax), "tax": str(tax), "total": str(total), "grand_total": str(total),
                  "grand_total_tax": str(tax), "currency_code": transaction["currency"]}
        event = {
            "event_id": "evt_" + transaction["id"][4:], "event_type": "transaction.completed",
            "occurred_at": paddle_time(now), "notification_id": "ntf_" + transaction["id"][4:],
            "data": {
                "id": transaction["id"], "status": "completed",
                "origin": "web" if transaction["subscription"] else "api",
                "customer_id": "ctm_01fake", "address_id": "add_01fake",
                "subscription_id": "sub_" + transaction["id"][4:] if transaction["subscription"] else None,
                "currency_code": transaction["currency"], "custom_data": transaction["custom"],
                "billing_period": period, "collection_mode": "automatic",
                "details": {"totals": totals, "line_items": [{
                    "id": "txnitm_" + transaction["id"][4:], "price_id": "pri_01fake", "quantity": 1,
                    "totals": {"subtotal": totals["subtotal"], "tax": totals["tax"], "total": totals["total"]},
                }]},
            },
        }
        return json.dumps(event, separators=(",", ":")).encode()

    def notify(self, transaction):
        body = self.completed(transaction)
        stamp = int(time.time())
        mac = hmac.new(self.secret.encode(), f"{stamp}:".encode() + body, hashlib.sha256).hexdigest()
        request = urllib.request.Request(
            self.linkout_url() + "/webhooks/paddle", data=body, method="POST",
            headers={"Content-Type": "application/json", "Paddle-Signature": f"ts={stamp};h1={mac}"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            if answer.status != 200:
                raise RuntimeError(f"linkout answered the notification {answer.status}")


def handler(paddle):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status, body, content_type="application/json", headers=()):
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def authorized(self):
            if self.headers.get("Authorization") == f"Bearer {paddle.api_key}":
                return True
            self.answer(403, {"error": {"type": "request_error", "code": "forbidden", "detail": "bad key"}})
            return False

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = urllib.parse.parse_qs(url.query)
            if url.path == "/checkout":
                transaction = paddle.transactions.get((query.get("transaction_id") or [""])[0])
                if transaction is None:
                    return self.answer(404, b"no such transaction", "text/plain")
                return self.answer(200, self.checkout_page(transaction), "text/html; charset=utf-8")
            if not self.authorized():
                return None
            if url.path == "/transactions":
                return self.answer(200, {"data": [], "meta": {"request_id": "fake", "pagination": {
                    "per_page": 200, "has_more": False}}})
            if url.path.startswith("/transactions/"):
                transaction = paddle.transactions.get(url.path.rsplit("/", 1)[1])
                if transaction is None:
                    return self.answer(404, {"error": {"type": "request_error", "code": "not_found"}})
                entity = paddle.entity(transaction, with_address=query.get("include") == ["address"])
                return self.answer(200, {"data": entity, "meta": {"request_id": "fake"}})
            return self.answer(404, {"error": {"type": "request_error", "code": "not_found"}})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if self.path == "/checkout/pay":
                form = urllib.parse.parse_qs(body.decode())
                transaction = paddle.transactions.get((form.get("transaction_id") or [""])[0])
                if transaction is None:
                    return self.answer(404, b"no such transaction", "text/plain")
                paddle.notify(transaction)
                return self.answer(303, b"", "text/plain", [("Location", paddle.linkout_url() + "/pay/return")])
            if self.path != "/transactions" or not self.authorized():
                return None if self.path == "/transactions" else self.answer(404, b"", "text/plain")
            status, answer = paddle.create(json.loads(body or b"{}"))
            return self.answer(status, answer)

        def checkout_page(self, transaction):
            amount = html.escape(f"{transaction['amount']} {transaction['currency']}")
            return (
                "<!doctype html><html lang=en><head><meta charset=utf-8>"
                "<meta name=viewport content='width=device-width, initial-scale=1'>"
                "<title>Paddle checkout (test)</title></head><body><main><h1>Paddle checkout (test)</h1>"
                f"<p>Amount: {amount} (minor units)</p>"
                "<form method=post action=/checkout/pay>"
                f"<input type=hidden name=transaction_id value='{html.escape(transaction['id'])}'>"
                "<button type=submit id=pay>Pay</button></form></main></body></html>"
            ).encode()

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--linkout-url-file", required=True)
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    arguments = parser.parse_args()
    paddle = Paddle(arguments.api_key, arguments.secret, arguments.linkout_url_file)
    checkout = ThreadingHTTPServer(("127.0.0.1", 0), handler(paddle))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(arguments.cert, arguments.key)
    checkout.socket = context.wrap_socket(checkout.socket, server_side=True)
    threading.Thread(target=checkout.serve_forever, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(paddle))
    print(f"fake paddle checkout on https://127.0.0.1:{checkout.server_address[1]}", flush=True)
    print(f"fake paddle listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
