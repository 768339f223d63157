"""Schemathesis hooks for the API tier (scripts/api-test.sh).

The server trusts 127.0.0.1 as a proxy in this tier, and each request names a client of its own in
X-Forwarded-For (the next loopback address). Schemathesis sends wrong and missing bearer tokens on purpose (the
ignored_auth check, negative cases); from one client, ten of those within a minute start the failed-auth throttle,
and every bearer route would answer 429 for the rest of the run, testing nothing else. A counter, not `random`:
Hypothesis reseeds `random` for every test case, which would give every request the same address.
"""

import itertools
import threading

import schemathesis

_next = itertools.count(1)
_lock = threading.Lock()


@schemathesis.hook
def before_call(context, case, kwargs):
    with _lock:
        n = next(_next) % (1 << 24)
    address = "127.{}.{}.{}".format(n >> 16 & 255, n >> 8 & 255, n & 255)
    case.headers = {**(case.headers or {}), "X-Forwarded-For": address}
