// Package runner runs a scenario: it expands the scenario into jobs (one
// per query, or per query and delay in a sweep), runs each job's stream of
// generated rows through the query's micro-batches, measures every batch
// against ground truth, and assembles the results folder. Jobs run in
// parallel; their results do not depend on the number of workers.
package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/sim/registry"
	"github.com/dedupsim/dedupsim/sim/scenario"
	"github.com/dedupsim/dedupsim/sim/spark/chain"
)

// Job is one query run on the scenario's stream.
type Job struct {
	// Index orders jobs in the results: query order, then delay order.
	Index int
	// Name is the query's name.
	Name string
	// Query is the query text as run (with the sweep's delay, if any).
	Query string
	Plan  chain.Plan
	// Delay is the watermark delay in seconds; nil without a watermark.
	// A sweep job of another engine's query has the swept value here, the
	// horizon it set (registry.HorizonKey); its results show it as the
	// job's delay.
	Delay *float64
	// FileName names the job's progress file (without extension).
	FileName string
	// Store is the state store backend of the job's operators: the
	// query's store, else the scenario's (scenario.QueryStore); a run's
	// Options.Store replaces it for every job.
	Store string
	// Engine is "" for a Spark query; else the engine whose operator
	// Rows runs (registry), row by row (rowjob.go).
	Engine string
	Rows   *registry.ScenarioQuery
}

// Jobs expands s into jobs. Without a sweep, one job per query. With a
// sweep, every query that has a horizon (scenario.Query.IsSwept) runs once
// per swept value, taken as it is as the horizon: a Spark query's
// withWatermark delays are replaced, another engine's horizon key
// (registry.HorizonKey: Flink's TTL, Kafka Streams' window, Beam's
// duration) is set; a Spark query without a watermark runs once, since no
// delay changes it. A sweep job is named NAME@VALUE. Every job of a query
// runs on the query's store.
func Jobs(s *scenario.Scenario) ([]Job, error) {
	var jobs []Job
	for qi, q := range s.Queries {
		if !q.IsSpark() {
			if s.Sweep == nil || len(s.Sweep.Delay) == 0 {
				sq, err := registry.ScenarioQueryFor(q.Engine, q.Spec())
				if err != nil {
					return nil, fmt.Errorf("queries[%d]: %w", qi, err)
				}
				jobs = append(jobs, Job{Index: len(jobs), Name: q.Name, Query: sq.Text, FileName: q.Name, Store: s.QueryStore(qi), Engine: q.Engine, Rows: &sq})
				continue
			}
			for _, v := range s.Sweep.Delay {
				d := v.Std()
				sq, err := registry.SweptQueryFor(q.Engine, q.Spec(), d)
				if err != nil {
					return nil, fmt.Errorf("queries[%d] with %s %s: %w", qi, registry.HorizonKey(q.Engine), interval.Format(d), err)
				}
				secs := d.Seconds()
				jobs = append(jobs, Job{Index: len(jobs), Name: q.Name, Query: sq.Text, Delay: &secs, FileName: q.Name + "@" + interval.Format(d),
					Store: s.QueryStore(qi), Engine: q.Engine, Rows: &sq})
			}
			continue
		}
		c, err := chain.Parse(q.Query)
		if err != nil {
			return nil, fmt.Errorf("queries[%d].query: %w", qi, err)
		}
		var delays []time.Duration
		if s.Sweep != nil && hasWatermark(c) {
			for _, d := range s.Sweep.Delay {
				delays = append(delays, d.Std())
			}
		}
		if len(delays) == 0 {
			j, err := newJob(len(jobs), q.Name, q.Name, s.QueryStore(qi), c)
			if err != nil {
				return nil, fmt.Errorf("queries[%d].query: %w", qi, err)
			}
			jobs = append(jobs, j)
			continue
		}
		for _, d := range delays {
			cd := WithDelay(c, d)
			j, err := newJob(len(jobs), q.Name, q.Name+"@"+interval.Format(d), s.QueryStore(qi), cd)
			if err != nil {
				return nil, fmt.Errorf("queries[%d].query with delay %s: %w", qi, interval.Format(d), err)
			}
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

func newJob(index int, name, file, store string, c chain.Chain) (Job, error) {
	plan, err := chain.PlanFor(c, scenario.Schema())
	if err != nil {
		return Job{}, err
	}
	j := Job{Index: index, Name: name, Query: c.Text, Plan: plan, FileName: file, Store: store}
	for _, n := range plan.Nodes {
		if n.Op.Kind == chain.WithWatermark {
			d := float64(n.DelayMs) / 1000
			j.Delay = &d
			break
		}
	}
	return j, nil
}

func hasWatermark(c chain.Chain) bool {
	for _, op := range c.Ops {
		if op.Kind == chain.WithWatermark {
			return true
		}
	}
	return false
}

// WithDelay returns c with the delay of every withWatermark set to d, and
// its text re-rendered.
func WithDelay(c chain.Chain, d time.Duration) chain.Chain {
	ops := make([]chain.Op, len(c.Ops))
	copy(ops, c.Ops)
	for i := range ops {
		if ops[i].Kind == chain.WithWatermark {
			ops[i].DelayMs = d.Milliseconds()
			ops[i].Delay = sparkInterval(d)
		}
	}
	out := chain.Chain{Ops: ops}
	out.Text = out.String()
	return out
}

// sparkInterval renders d the way users write a watermark delay, largest
// units first: "20 minutes", "5 minutes 38 seconds".
func sparkInterval(d time.Duration) string {
	ms := d.Milliseconds()
	if ms <= 0 {
		return "0 seconds"
	}
	units := []struct {
		ms   int64
		name string
	}{{86_400_000, "day"}, {3_600_000, "hour"}, {60_000, "minute"}, {1000, "second"}, {1, "millisecond"}}
	var parts []string
	for _, u := range units {
		if n := ms / u.ms; n > 0 {
			ms -= n * u.ms
			if n == 1 {
				parts = append(parts, "1 "+u.name)
			} else {
				parts = append(parts, fmt.Sprintf("%d %ss", n, u.name))
			}
		}
	}
	return strings.Join(parts, " ")
}
