#!/bin/sh
# Writes a large event log for BENCHMARKS.md ("Event logs"), made outside
# dedupsim's generator (mawk's random numbers, different code):
#   usage: sh make_log.sh ROWS > log.csv
# Rows arrive as a Poisson process of 50,000 rows/s from
# 2026-03-01T00:00:00Z; each new event's event time is its arrival less an
# exponential delay (mean 2 s); 10% of events are resent once, about
# 1-40 s later (uniform over the rows between), the copy re-stamped (its
# own arrival less an exponential delay); uuid v4 ids; 1,000 customers.
# Columns: event_id, customer_id, event_time, arrival (epoch
# microseconds); rows in arrival order.
exec mawk -v N="${1:-1000000}" -v seed=20261207 '
BEGIN {
	srand(seed)
	rate = 50000; t = 1772323200 * 1000000; gap = 20 * rate
	print "event_id,customer_id,event_time,arrival"
	for (i = 0; i < N; i++) {
		t += int(-log(1 - rand()) * 1000000 / rate)
		if (i in pend) {
			id = pend[i]; c = cust[i]; delete pend[i]; delete cust[i]
		} else {
			id = sprintf("%08x-%04x-4%03x-%04x-%06x%06x", int(rand() * 4294967296), int(rand() * 65536), int(rand() * 4096), 32768 + int(rand() * 16384), int(rand() * 16777216), int(rand() * 16777216))
			c = int(rand() * 1000)
			if (rand() < 0.1) {
				g = i + 1 + int(rand() * 2 * gap)
				while (g in pend) g++
				pend[g] = id; cust[g] = c
			}
		}
		printf "%s,%d,%.0f,%.0f\n", id, c, t - int(-log(1 - rand()) * 2000000), t
	}
}'
