#!/usr/bin/env python3
"""What request bodies cost the server in memory, measured on loopback.

  bench/bodies.py [--binary .build/release/linkout] [--clients 1000] [--seconds 10] [SCENARIO ...]

Each scenario starts a fresh `linkout serve` (port 0, a throwaway data folder, default configuration, logging at
warning), opens CLIENTS connections from 127.0.0.1 to 127.0.0.8 (the default per-client cap is 256), sends each
request head at once and its body in 20 pieces over SECONDS, reads whatever answer comes (at once or after the
body), then closes every connection. The server's RSS is sampled every 50 ms: before the clients connect, the
peak while they send, and 5 s after they have all closed. Prints one Markdown row per scenario.

Scenarios:
  healthz-1m        POST /healthz with a 1 MiB body: no route takes it
  line-items-1m     POST /v1/tokens/{id}/line-items with a 1 MiB body: over that route's limit
  line-items-256k   the same with 256 KiB, the largest body a route takes by default, with the API token
  line-items-guess  the same with a wrong API token: refused when the head arrives
  tiny-chunks       the same route, chunked: 1 MiB of one-byte chunks (six bytes of framing per byte of data)

The server has an API token (LINKOUT_API_TOKEN), which the line-item scenarios send (but line-items-guess), so
each body is taken as a caller allowed to send it would have it taken.

Bounded: 127.0.0.1 only, at most --clients connections, each run ends after SECONDS plus at most 40 s, and the
server is stopped and its folder deleted even on failure.
"""
import argparse
import collections
import os
import selectors
import shutil
import signal
import socket
import subprocess
import tempfile
import time

API_TOKEN = "bench-api-token"
SCENARIOS = {
    "healthz-1m": ("/healthz", 1 << 20, False, None),
    "line-items-1m": ("/v1/tokens/SANDBOX_bench/line-items", 1 << 20, False, API_TOKEN),
    "line-items-256k": ("/v1/tokens/SANDBOX_bench/line-items", 256 << 10, False, API_TOKEN),
    "line-items-guess": ("/v1/tokens/SANDBOX_bench/line-items", 256 << 10, False, "a-guess"),
    "tiny-chunks": ("/v1/tokens/SANDBOX_bench/line-items", 1 << 20, True, API_TOKEN),
}
PIECES = 20
SOURCES = 8


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Server:
    """`linkout serve` on a free port with a throwaway data folder."""

    def __init__(self, binary, repository):
        self.folder = tempfile.mkdtemp(prefix="linkout-bodies-")
        config = os.path.join(self.folder, "config.json")
        with open(config, "w") as f:
            f.write('{"server": {"host": "127.0.0.1", "publicDir": "%s"}, "logging": {"level": "warning"}}'
                    % os.path.join(repository, "Public"))
        self.log = open(os.path.join(self.folder, "server.log"), "w")
        self.process = subprocess.Popen(
            [binary, "serve", "--config", config, "--port", "0", "--data-dir", os.path.join(self.folder, "data")],
            stdout=subprocess.PIPE, stderr=self.log, text=True,
            env=dict(os.environ, LINKOUT_API_TOKEN=API_TOKEN))
        line = self.process.stdout.readline()
        if "listening on" not in line:
            self.stop()
            raise SystemExit(f"server did not start: {line!r}")
        self.port = int(line.rsplit(":", 1)[1])

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Client:
    def __init__(self, index, port, head, size):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.bind((f"127.0.0.{1 + index % SOURCES}", 0))
        self.socket.settimeout(10)
        self.socket.connect(("127.0.0.1", port))
        self.socket.sendall(head)
        self.socket.setblocking(False)
        self.size = size
        self.sent = 0
        self.answer = b""
        self.status = None
        self.answered_at = None
        self.done = False

    def send_up_to(self, target, payload):
        """Sends body bytes until `target` are sent or the socket is full; stops for good once answered."""
        while not self.done and self.status is None and self.sent < target:
            try:
                self.sent += self.socket.send(payload[self.sent:target])
            except BlockingIOError:
                return
            except OSError:
                self.done = True

    def read(self, now):
        try:
            data = self.socket.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data and self.status is None:
            self.answer += data
            if b"\r\n" in self.answer:
                self.status = int(self.answer.split(b" ", 2)[1])
                self.answered_at = now
        if not data or self.status is not None:
            self.done = True


def run(scenario, binary, repository, clients, seconds):
    path, size, chunked, bearer = SCENARIOS[scenario]
    server = Server(binary, repository)
    connections = []
    selector = selectors.DefaultSelector()
    try:
        pid = server.process.pid
        time.sleep(1)
        before = rss_mb(pid)
        framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {size}"
        authorization = f"Authorization: Bearer {bearer}\r\n" if bearer else ""
        head = (f"POST {path} HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                f"{authorization}{framing}\r\n\r\n").encode()
        # The whole body as sent (for chunked, one-byte chunks and the last chunk, `size` bytes in all).
        body = b"1\r\nx\r\n" * ((size - 5) // 6) + b"0\r\n\r\n" if chunked else b"x" * size
        size = len(body)
        payload = memoryview(body)
        started = time.monotonic()
        for index in range(clients):
            client = Client(index, server.port, head, size)
            connections.append(client)
            selector.register(client.socket, selectors.EVENT_READ, client)
        peak = rss_mb(pid)
        last_sample = 0.0

        def service(timeout):
            nonlocal peak, last_sample
            for key, _ in selector.select(timeout):
                key.data.read(time.monotonic())
                if key.data.done:
                    selector.unregister(key.fileobj)
            now = time.monotonic()
            if now - last_sample >= 0.05:
                peak = max(peak, rss_mb(pid))
                last_sample = now

        for piece in range(1, PIECES + 1):
            step_end = started + seconds * piece / PIECES
            target = size * piece // PIECES
            while True:
                for client in connections:
                    client.send_up_to(target, payload)
                service(0.01)
                if time.monotonic() >= step_end:
                    break
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(not c.done for c in connections):
            for client in connections:
                client.send_up_to(size, payload)
            service(0.05)
        statuses = collections.Counter(c.status for c in connections)
        early = sum(1 for c in connections if c.answered_at is not None and c.answered_at - started < 1.5)
        for client in connections:
            client.socket.close()
        connections = []
        closed = time.monotonic()
        while time.monotonic() - closed < 5:
            peak = max(peak, rss_mb(pid))
            time.sleep(0.05)
        after = rss_mb(pid)
        return before, peak, after, statuses, early
    finally:
        for client in connections:
            client.socket.close()
        selector.close()
        server.stop()


def main():
    repository = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default=os.path.join(repository, ".build/release/linkout"))
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    arguments = parser.parse_args()
    print("| scenario | clients | RSS before MB | peak MB | 5 s after close MB | answers | answered in 1.5 s |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: |")
    for scenario in arguments.scenarios:
        before, peak, after, statuses, early = run(
            scenario, arguments.binary, repository, arguments.clients, arguments.seconds)
        answers = ", ".join(f"{status or 'none'}×{count}" for status, count in sorted(
            statuses.items(), key=lambda item: item[0] or 0))
        print(f"| {scenario} | {arguments.clients} | {before:.0f} | {peak:.0f} | {after:.0f} | {answers} | {early} |",
              flush=True)


if __name__ == "__main__":
    main()
