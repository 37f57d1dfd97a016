#!/usr/bin/env python3
"""Writes events.csv.gz, a small event log with known parameters, made
outside dedupsim's generator: a different random process (Python's Mersenne
Twister; per segment a normally-approximated Poisson count of events placed
uniformly at random, not exponential gaps) and different code.

Usage: python3 make_log.py [OUT]   (default: events.csv.gz beside this file)

The parameters (dedupsim's `simulate fit` should find them; docs/fit.md):
  seed            20261207
  start           2026-03-01T00:00:03.5Z (the first slot; arrivals after it)
  rate profile    10 min at 6/s, 5 min stall (no originals), 10 min at 12/s
  arrival delay   lognormal, mu = ln(2 s), sigma = 0.8 (median 2 s)
  retries         15% of events resent; 1 extra copy (70%) or 2 (30%);
                  gap between copies lognormal, mu = ln(20 s), sigma = 0.5;
                  copies re-stamped: event time + the time since the first
  bad clocks      5 rows, new events, event time 3 min ahead of arrival,
                  at 3m, 7m30s, 12m, 18m and 21m after start
  customers       300, uniform
Columns: event_id (UUID v4 text), customer_id, event_time, ingest_time
(RFC 3339 UTC with microseconds); rows in ingest_time order.
"""
import datetime as dt
import gzip
import math
import os
import random
import sys
import uuid

SEED = 20261207
START = dt.datetime(2026, 3, 1, 0, 0, 3, 500000, tzinfo=dt.timezone.utc)
SEGMENTS = [(600, 6.0), (300, 0.0), (600, 12.0)]  # (seconds, originals per second)
DELAY_MU, DELAY_SIGMA = math.log(2.0), 0.8
RESEND, TWO_COPIES = 0.15, 0.30
GAP_MU, GAP_SIGMA = math.log(20.0), 0.5
BAD_AT = [180, 450, 720, 1080, 1260]  # seconds after START
BAD_SKEW = 3 * 60
CUSTOMERS = 300


def us(t):
    """Microseconds since the epoch of an aware datetime."""
    return round(t.timestamp() * 1e6)


def fmt(micros):
    t = dt.datetime.fromtimestamp(micros // 1_000_000, tz=dt.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (micros % 1_000_000)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "events.csv.gz")
    rng = random.Random(SEED)
    t0 = us(START)
    rows = []  # (arrival, order, id, customer, event_time)

    def new_id():
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    off = 0
    for length, rate in SEGMENTS:
        lam = rate * length
        n = max(0, round(rng.gauss(lam, math.sqrt(lam)))) if lam > 0 else 0
        for _ in range(n):
            arrival = t0 + off + rng.randrange(length * 1_000_000)
            delay = math.exp(rng.gauss(DELAY_MU, DELAY_SIGMA))
            event_time = arrival - round(delay * 1e6)
            eid, cust = new_id(), rng.randrange(CUSTOMERS)
            rows.append((arrival, len(rows), eid, cust, event_time))
            if rng.random() < RESEND:
                at = arrival
                for _ in range(2 if rng.random() < TWO_COPIES else 1):
                    at += round(math.exp(rng.gauss(GAP_MU, GAP_SIGMA)) * 1e6)
                    rows.append((at, len(rows), eid, cust, event_time + (at - arrival)))
        off += length * 1_000_000
    for s in BAD_AT:
        arrival = t0 + s * 1_000_000
        rows.append((arrival, len(rows), new_id(), rng.randrange(CUSTOMERS), arrival + BAD_SKEW * 1_000_000))
    rows.sort()
    # mtime=0: the same bytes on every run.
    with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
        f.write(b"event_id,customer_id,event_time,ingest_time\n")
        for arrival, _, eid, cust, event_time in rows:
            f.write(f"{eid},{cust},{fmt(event_time)},{fmt(arrival)}\n".encode())
    print(f"{out}: {len(rows)} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
