// Package fit estimates a scenario's workload from an event log: the rows
// of a real stream, each with an id, the producer's event time and the
// arrival (broker or ingestion) time. It reads the log twice through a
// Source it opens (the first pass sizes the sample, the second measures)
// and keeps memory bounded by its sample sizes, never by the log's length.
//
// What it estimates, and how (each method is also named in the scenario
// it writes and in docs/fit.md):
//
//   - The rate of originals over time: counts of first copies per interval
//     of a hash sample of ids, cut into segments by binary segmentation on
//     the Poisson log-likelihood (a segment of no originals is a stall,
//     rate 0); each rate with a Poisson interval.
//   - The arrival delay of originals (arrival - event time of an event's
//     first row): the family of generators/randvar with the smallest
//     one-sample Kolmogorov-Smirnov statistic among those whose statistic
//     is below the 1% critical value, else the observed values
//     (empirical); parameters by maximum likelihood (gonum's distuv
//     holds the distributions), intervals by a percentile bootstrap with
//     a fixed seed.
//   - Retries: the share of events with more than one row (Wilson
//     interval), the extra copies per resent event (constant, uniform or
//     geometric by total-variation distance, else empirical), the gap
//     between successive copies (as the arrival delay), and whether copies
//     keep the first row's event time, re-stamp it by the time between
//     arrivals, or move it by a bounded jitter.
//   - Bad clocks: rows whose event time is ahead of their arrival by more
//     than a tolerance; 20 or more make a futureTimestamps share (Wilson
//     interval) with a fitted skew, fewer are bad-clock faults at their
//     own times and skews.
//   - The key form (uuid, int or other) and, when a column holds it, the
//     number of customers (exact up to 4096 distinct values, above by the
//     k-minimum-values estimate with its analytic relative error).
package fit
