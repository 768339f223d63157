#!/usr/bin/env python3
"""The reads and the watching for bench/burst.sh. Standard library only; 127.0.0.1 only.

usage:
  burst_reads.py settle PORT
      waits until /metrics reports an empty journal backlog (polled every 0.2 s); fails if the gauge is missing
  burst_reads.py quiet PORT ADMIN_TOKEN [RUNS]
      each read once to warm up and RUNS (default 5) times more; prints the medians in ms on one line:
      `dashboard chart find tokens metrics`
  burst_reads.py fold PORT ADMIN_TOKEN SERVER_PID MARK_FILE
      watches a burst (MARK_FILE.ready is created once it is watching): every 0.2 s the backlog gauges and the
      server's VmRSS, every 0.5 s the token list and an unmatched search; stops once MARK_FILE holds `START END` (epoch seconds of wrk's start and end, written
      by burst.sh when wrk is done) and the backlog then reads 0. Prints one line:
      `fold_s start_to_zero_s peak_backlog peak_age_s peak_rss_kb tokens_median tokens_max find_median
      find_max samples`
"""
import http.client
import statistics
import sys
import threading
import time

from admin_session import request, sign_in

BACKLOG = "linkout_journal_backlog_visits"
BACKLOG_AGE = "linkout_journal_backlog_age_seconds"
# A prefix no landing mints (bench/landing.lua's ids are hexadecimal UUIDs): the search walks without a hit.
UNMATCHED = "/admin/find?q=bench-nomatch"
TOKENS = "/admin/tokens?limit=50"


def timed_get(port, path, headers):
    """(milliseconds, status) of one GET; a status other than 200 is reported once per path on stderr."""
    began = time.perf_counter()
    response, _ = request(port, "GET", path, headers)
    elapsed = (time.perf_counter() - began) * 1000
    if response.status != 200 and path not in timed_get.warned:
        timed_get.warned.add(path)
        print(f"burst_reads.py: GET {path} answered {response.status}", file=sys.stderr)
    return elapsed


timed_get.warned = set()


def gauges(port):
    """(backlog visits, oldest backlog age in seconds) from /metrics; exits if the backlog gauge is missing."""
    _, data = request(port, "GET", "/metrics")
    values = {}
    for line in data.decode().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, _, value = line.rpartition(" ")
        name = name.split("{", 1)[0]
        if name in (BACKLOG, BACKLOG_AGE):
            values[name] = values.get(name, 0.0) + float(value)
    if BACKLOG not in values:
        sys.exit(f"burst_reads.py: /metrics has no {BACKLOG}")
    return values[BACKLOG], values.get(BACKLOG_AGE, 0.0)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def settle(port):
    while gauges(port)[0] > 0:
        time.sleep(0.2)


def quiet(port, admin_token, runs):
    browser = sign_in(port, admin_token)
    bearer = {"Authorization": "Bearer " + admin_token}
    reads = [
        ("/admin", browser),
        ("/admin/chart.svg", browser),
        (UNMATCHED, browser),
        (TOKENS, bearer),
        ("/metrics", {}),
    ]
    medians = []
    for path, headers in reads:
        timed_get(port, path, headers)
        medians.append(statistics.median(timed_get(port, path, headers) for _ in range(runs)))
    print(" ".join(f"{m:.1f}" for m in medians))


def sample_reads(port, browser, bearer, stop, tokens, finds):
    """Every 0.5 s (or at once, when a read took longer) the token list and the unmatched search."""
    while not stop.is_set():
        began = time.monotonic()
        try:
            tokens.append(timed_get(port, TOKENS, bearer))
            finds.append(timed_get(port, UNMATCHED, browser))
        except (OSError, http.client.HTTPException) as error:
            # A read the server dropped is worth telling, not worth losing the burst's other figures for.
            print(f"burst_reads.py: a read during the burst failed: {error}", file=sys.stderr)
        stop.wait(max(0.0, 0.5 - (time.monotonic() - began)))


def read_mark(mark):
    try:
        with open(mark) as f:
            start, end = (float(v) for v in f.read().split())
        return start, end
    except (FileNotFoundError, ValueError):
        return None


def fold(port, admin_token, pid, mark):
    browser = sign_in(port, admin_token)
    bearer = {"Authorization": "Bearer " + admin_token}
    stop = threading.Event()
    tokens, finds = [], []
    reader = threading.Thread(target=sample_reads, args=(port, browser, bearer, stop, tokens, finds), daemon=True)
    reader.start()
    peak_backlog = peak_age = peak_rss = 0
    gauges(port)
    # burst.sh starts wrk once this exists: signed in and the gauge answering, so the burst is watched whole.
    open(mark + ".ready", "w").close()
    try:
        while True:
            began = time.monotonic()
            # The mark is read before the poll, so a 0 it then reads was seen after wrk had ended.
            marked = read_mark(mark)
            backlog, age = gauges(port)
            zero_at = time.time()
            peak_backlog, peak_age = max(peak_backlog, backlog), max(peak_age, age)
            peak_rss = max(peak_rss, rss_kb(pid))
            if marked and backlog == 0:
                break
            time.sleep(max(0.0, 0.2 - (time.monotonic() - began)))
    finally:
        stop.set()
        reader.join()
    start, end = marked
    tokens, finds = tokens or [0.0], finds or [0.0]
    print(
        f"{zero_at - end:.2f} {zero_at - start:.2f} {peak_backlog:.0f} {peak_age:g} {peak_rss}"
        f" {statistics.median(tokens):.1f} {max(tokens):.1f} {statistics.median(finds):.1f} {max(finds):.1f}"
        f" {len(tokens)}"
    )


def main(argv):
    command, port = argv[1], int(argv[2])
    if command == "settle":
        settle(port)
    elif command == "quiet":
        quiet(port, argv[3], int(argv[4]) if len(argv) > 4 else 5)
    elif command == "fold":
        fold(port, argv[3], int(argv[4]), argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
