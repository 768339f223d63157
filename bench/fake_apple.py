#!/usr/bin/env python3
"""A fake of Apple's External Purchase Server API for benchmarks: every report sent (PUT
/externalPurchase/v1/reports) is answered 200 with its requestIdentifier, as Apple does, and remembered, so Retrieve External Purchase Report
(GET .../reports/{id}) finds it. Loopback only. usage: fake_apple.py PORT"""
import http.server
import json
import sys
import threading

held = {}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            identifier = json.loads(body).get("requestIdentifier", "")
        except ValueError:
            return self.answer(400, '{"errorCode":4000000,"errorMessage":"bad json"}')
        with lock:
            held[identifier] = body.decode()
        self.answer(200, json.dumps({"requestIdentifier": identifier}))

    def do_GET(self):
        identifier = self.path.rsplit("/", 1)[-1]
        with lock:
            known = held.get(identifier)
        if known is None:
            return self.answer(404, '{"errorCode":4040001,"errorMessage":"not found"}')
        self.answer(200, '{"report":' + known + "}")

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
