#!/usr/bin/env python3
"""Times the operator's reads for bench/growth.sh: signs in to the dashboard with the admin token, then fetches
each read once to warm up and RUNS times more, printing `NAME median_ms status bytes` per read.
usage: growth_reads.py PORT ADMIN_TOKEN [RUNS]"""
import statistics
import sys
import time

from admin_session import request, sign_in

port, admin_token = int(sys.argv[1]), sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5

browser = sign_in(port, admin_token)
bearer = {"Authorization": "Bearer " + admin_token}
reads = [
    ("dashboard", "/admin", browser),
    ("chart", "/admin/chart.svg", browser),
    ("find", "/admin/find?q=seed-0000123", browser),
    ("tokens", "/admin/tokens?limit=50", bearer),
    ("metrics", "/metrics", {}),
]
for name, path, headers in reads:
    request(port, "GET", path, headers)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        response, data = request(port, "GET", path, headers)
        times.append((time.perf_counter() - began) * 1000)
    print(f"{name} {statistics.median(times):.1f} {response.status} {len(data)}")
