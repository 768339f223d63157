"""Samples the latency a newcomer sees while others flood the server.

Every INTERVAL seconds, for SECONDS seconds, opens a new connection to 127.0.0.1:PORT, sends one GET PATH and
reads the whole response. Prints "samples p50_ms p99_ms failures". A request that fails or takes longer than
5 s counts as a failure (and as 5000 ms), so a server that starves newcomers shows in the numbers.
"""
import socket
import sys
import time

port, path, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
interval = 0.02
latencies = []
failures = 0
request = f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode()
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    started = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
            connection.sendall(request)
            response = b""
            while True:
                chunk = connection.recv(65536)
                if not chunk:
                    break
                response += chunk
        if not response.startswith(b"HTTP/1.1 200"):
            raise OSError("status " + response[:12].decode(errors="replace"))
        latencies.append((time.perf_counter() - started) * 1000)
    except OSError:
        failures += 1
        latencies.append(5000.0)
    time.sleep(interval)
latencies.sort()
def percentile(p):
    return latencies[min(len(latencies) - 1, int(len(latencies) * p))] if latencies else 0.0
print(f"{len(latencies)} {percentile(0.50):.2f} {percentile(0.99):.2f} {failures}")
