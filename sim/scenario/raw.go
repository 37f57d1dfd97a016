package scenario

import "go.yaml.in/yaml/v3"

// The raw* types mirror the YAML schema key for key. Every value is kept as
// its yaml.Node, so decoding never fails on a value's type and the
// conversion to the typed Scenario can report each bad value with its key
// path. A nil pointer or slice, or a zero Node, is an absent key.

type rawScenario struct {
	Name               yaml.Node    `yaml:"name"`
	Seed               yaml.Node    `yaml:"seed"`
	Start              yaml.Node    `yaml:"start"`
	Duration           yaml.Node    `yaml:"duration"`
	Trigger            yaml.Node    `yaml:"trigger"`
	NoDataMicroBatches yaml.Node    `yaml:"noDataMicroBatches"`
	Workload           *rawWorkload `yaml:"workload"`
	Queries            []rawQuery   `yaml:"queries"`
	Store              yaml.Node    `yaml:"store"`
	Sink               *rawSink     `yaml:"sink"`
	Faults             []rawFault   `yaml:"faults"`
	Sweep              *rawSweep    `yaml:"sweep"`
}

type rawWorkload struct {
	Rate             yaml.Node            `yaml:"rate"`
	Profile          []rawSegment         `yaml:"profile"`
	IDs              yaml.Node            `yaml:"ids"`
	Customers        yaml.Node            `yaml:"customers"`
	ArrivalDelay     *rawDist             `yaml:"arrivalDelay"`
	Retries          *rawRetries          `yaml:"retries"`
	FutureTimestamps *rawFutureTimestamps `yaml:"futureTimestamps"`
	Heartbeat        yaml.Node            `yaml:"heartbeat"`
}

type rawSegment struct {
	For  yaml.Node `yaml:"for"`
	Rate yaml.Node `yaml:"rate"`
}

type rawRetries struct {
	Probability yaml.Node `yaml:"probability"`
	Copies      *rawDist  `yaml:"copies"`
	Delay       *rawDist  `yaml:"delay"`
	Timestamp   yaml.Node `yaml:"timestamp"`
	Jitter      yaml.Node `yaml:"jitter"`
	Metadata    yaml.Node `yaml:"metadata"`
}

type rawFutureTimestamps struct {
	Probability yaml.Node `yaml:"probability"`
	Skew        *rawDist  `yaml:"skew"`
}

// rawDist holds every parameter of every family; the conversion checks
// that only the family's own parameters are given.
type rawDist struct {
	Dist   yaml.Node `yaml:"dist"`
	Value  yaml.Node `yaml:"value"`
	Min    yaml.Node `yaml:"min"`
	Max    yaml.Node `yaml:"max"`
	Mean   yaml.Node `yaml:"mean"`
	Median yaml.Node `yaml:"median"`
	P99    yaml.Node `yaml:"p99"`
	Mu     yaml.Node `yaml:"mu"`
	Sigma  yaml.Node `yaml:"sigma"`
	Alpha  yaml.Node `yaml:"alpha"`
	File   yaml.Node `yaml:"file"`
}

// param returns the node of parameter key.
func (d *rawDist) param(key string) *yaml.Node {
	switch key {
	case "value":
		return &d.Value
	case "min":
		return &d.Min
	case "max":
		return &d.Max
	case "mean":
		return &d.Mean
	case "median":
		return &d.Median
	case "p99":
		return &d.P99
	case "mu":
		return &d.Mu
	case "sigma":
		return &d.Sigma
	case "alpha":
		return &d.Alpha
	case "file":
		return &d.File
	}
	return nil
}

// allParams lists every parameter key of rawDist, in schema order.
func allParams() []string {
	return []string{"value", "min", "max", "mean", "median", "p99", "mu", "sigma", "alpha", "file"}
}

type rawQuery struct {
	Name  yaml.Node `yaml:"name"`
	Query yaml.Node `yaml:"query"`
}

type rawSink struct {
	Kind               yaml.Node `yaml:"kind"`
	FailureProbability yaml.Node `yaml:"failureProbability"`
}

type rawFault struct {
	At   yaml.Node `yaml:"at"`
	Kind yaml.Node `yaml:"kind"`
}

type rawSweep struct {
	Delay yaml.Node `yaml:"delay"`
}
