// Package generators produces the synthetic traffic dedupsim runs through
// its engines: deterministic pull iterators of rows in arrival order,
// composed from small parts (rate profile, id source, arrival delay, retry
// model, bad clocks, heartbeats). Each row carries ground truth that only
// the metrics package reads.
//
// # Generated traffic
//
// A scenario's workload becomes rows through a pipeline of stages, each
// wrapping the one before it (innermost first):
//
//  1. Originals arrive by a Poisson process over processing time
//     [start, start+duration): exponential gaps at the rate of the current
//     segment of the profile, which repeats to fill the duration. A
//     segment with rate 0 is a stall: no originals at all, while pending
//     copies and heartbeats still arrive. A plain rate is a profile of one
//     segment. Each original draws its customer_id uniformly in
//     [0, customers) and a random payload (the same on every copy).
//  2. Arrival delay: an original's event_time is its arrival minus a draw
//     of arrivalDelay, so arrivals are in order and event times are not.
//  3. Numbering: each event gets its logical number (Truth.Event) when its
//     first row is emitted, densely from 0 in creation order; heartbeats
//     share the sequence. With ids: int, event_id is the number; with
//     ids: uuid, it is a version 4 UUID whose 122 random bits are the
//     number enciphered by a permutation keyed by the seed (a six-round
//     Feistel network): as random to look at and to test as drawn bits,
//     distinct by construction, and decodable back to the number, so a
//     state store can hold a generated key as a number (KeyNumbering).
//  4. Retries: with probability retries.probability an original is resent;
//     the number of extra copies is drawn from retries.copies (a whole
//     number of at least 1; geometric {mean m} is on {1, 2, ...}), so that
//     Truth.Copies (1 + extras) is known on the original already. Copy k
//     arrives a retries.delay draw after copy k-1. Its event_time is the
//     original's (same), the original's plus the time between their
//     arrivals (restamp: the 10:00:00 vs 10:00:01 case), or the original's
//     plus a uniform whole number of microseconds in [-jitter, +jitter]
//     (jitter). attempt is the copy number if listed in retries.metadata,
//     else 0; ingest_time is the copy's own arrival if listed, else the
//     original's arrival.
//  5. Bad clocks: each row, original or copy, independently with
//     probability futureTimestamps.probability gets event_time = its
//     arrival + a skew draw, and Truth.BadClock. Copies are derived from
//     the original's event time before this stage, so a bad clock on one
//     row does not spread to the event's other rows.
//  6. Injected bad-clock rows (a scenario's faults of kind bad-clock,
//     Config.BadClockRows): one row per fault at arrival start+at, a new
//     logical event (Copies 1, Truth.BadClock) with a valid key of its own
//     (a random UUID or the event number as event_id, a customer_id in
//     [0, customers), a random payload: the injected rows' own stream),
//     event_time = arrival + skew and ingest_time = arrival. It is part of
//     the stream, so every query sees it; at the same microsecond it comes
//     after the rows of the stages inside it.
//  7. Heartbeats (heartbeat > 0): a row at start+h, start+2h, ... while
//     originals are still being generated (before start+duration) or
//     copies are still to arrive after it. Its event_time, ingest_time and
//     arrival are that instant; it is its own logical event (Copies 1,
//     Truth.Heartbeat) with its own id (the event number, or a random UUID),
//     customer_id -1 and payload 0. It never has a bad clock.
//
// The stream ends when no originals remain and no copies are pending. Rows
// come in non-decreasing Arrival order, and rows of the same microsecond
// in increasing Truth.Event order: copies of older events first, then the
// original created at that instant, then the heartbeat. Times are whole
// microseconds; a draw is rounded to the nearest microsecond and capped at
// 100 years, and an event has at most 2^20 extra copies.
//
// # Randomness
//
// One root seed; each part (arrivals, ids, customers, payload,
// arrivalDelay, retries, retryDelay, jitter, futureTimestamps,
// badClockFaults, heartbeats)
// draws from its own math/rand/v2 PCG stream seeded by SplitMix64 from the
// seed XOR the FNV-1a hash of the part's name. Changing one part of a
// workload therefore leaves every other part's draws unchanged: raising
// the retry probability keeps the same originals. Continuous distributions
// are drawn through gonum's distuv with Src set to the part's stream;
// constant, geometric and empirical (a uniform pick among the observed
// samples) are drawn here. Nothing reads the wall clock or a global
// random source.
//
// # Memory, speed and resuming
//
// The generator holds one queue entry per event with copies outstanding,
// never anything per row emitted, and Next does not allocate after the
// queue has grown to its working size. State captures the exact position
// (streams, queue, counters) and Restore resumes from it, so a killed run
// produces the identical remaining stream.
package generators
