#!/usr/bin/env python3
"""Times the operator's reads for bench/growth.sh: signs in to the dashboard with the admin token, then fetches
each read once to warm up and RUNS times more, printing `NAME median_ms status bytes` per read.
usage: growth_reads.py PORT ADMIN_TOKEN [RUNS]"""
import http.client
import re
import statistics
import sys
import time
import urllib.parse

port, admin_token = int(sys.argv[1]), sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5


def request(method, path, headers=None, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response, data


def cookies(response):
    return [h.split(";", 1)[0] for k, h in response.getheaders() if k.lower() == "set-cookie"]


# The login form: its csrf field and the login cookie it belongs to; then the session cookie.
form, page = request("GET", "/admin")
csrf = re.search(rb'name="csrf" value="([^"]+)"', page).group(1).decode()
login_cookie = "; ".join(c for c in cookies(form) if not c.endswith("="))
fields = urllib.parse.urlencode({"csrf": csrf, "token": admin_token})
signed, _ = request(
    "POST",
    "/admin/login",
    {"Content-Type": "application/x-www-form-urlencoded", "Cookie": login_cookie},
    fields,
)
session = "; ".join(c for c in cookies(signed) if not c.endswith("="))
if signed.status != 303 or not session:
    sys.exit(f"sign-in failed: {signed.status}")
browser = {"Cookie": session}
bearer = {"Authorization": "Bearer " + admin_token}
reads = [
    ("dashboard", "/admin", browser),
    ("chart", "/admin/chart.svg", browser),
    ("find", "/admin/find?q=seed-0000123", browser),
    ("tokens", "/admin/tokens?limit=50", bearer),
    ("metrics", "/metrics", {}),
]
for name, path, headers in reads:
    request("GET", path, headers)
    times = []
    for _ in range(runs):
        began = time.perf_counter()
        response, data = request("GET", path, headers)
        times.append((time.perf_counter() - began) * 1000)
    print(f"{name} {statistics.median(times):.1f} {response.status} {len(data)}")
