package metrics

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// CurvesFile is the name of a sweep's exact tradeoff curves in a results
// folder (simulate sweep --curve).
const CurvesFile = "curves.json"

// CurvesFormat versions curves.json.
const CurvesFormat = "dedupsim-curves/1"

// Curves is the content of curves.json: the exact one-pass tradeoff curve
// (sim/curve) of every swept query it supports, on the seed of the
// sweep's runs, and why the others have none.
type Curves struct {
	Format   string `json:"format"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Queries are the curves, in scenario order.
	Queries []QueryCurve `json:"queries"`
	// Unsupported names each swept query without a curve, with the
	// reason: its chart shows the swept delays only.
	Unsupported []CurveRefusal `json:"unsupported,omitempty"`
}

// CurveRefusal is a query the curve does not support, and why.
type CurveRefusal struct {
	Query  string `json:"query"`
	Reason string `json:"reason"`
}

// QueryCurve is one query's curve: a point per delay on the plan's
// search resolution (every second up to 199 s, then steps of 1%) and at
// every swept delay.
type QueryCurve struct {
	Query  string       `json:"query"`
	Points []CurvePoint `json:"points"`
}

// CurvePoint is a curve at one delay: the rates and false drops by cause
// at every point, the peak state where the pass tracked it (null
// elsewhere).
type CurvePoint struct {
	DelaySeconds      float64         `json:"delaySeconds"`
	MissedRate        float64         `json:"missedRate"`
	FalseDropRate     float64         `json:"falseDropRate"`
	FalseDropsByCause FalseDropCauses `json:"falseDropsByCause"`
	PeakStateRows     *int64          `json:"peakStateRows,omitempty"`
	PeakStateBytes    *int64          `json:"peakStateBytes,omitempty"`
}

// WriteCurves writes c as dir/curves.json, atomically.
func WriteCurves(dir string, c *Curves) error {
	c.Format = CurvesFormat
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Join(dir, CurvesFile), err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, CurvesFile), append(data, '\n')); err != nil {
		return fmt.Errorf("writing %s: %w", CurvesFile, err)
	}
	return nil
}

// ReadCurves reads dir/curves.json, a regular file of at most
// fileio.MaxSummaryBytes. A missing file is an error that wraps
// fs.ErrNotExist.
func ReadCurves(dir string) (*Curves, error) {
	path := filepath.Join(dir, CurvesFile)
	data, err := fileio.ReadFile(path, fileio.MaxSummaryBytes)
	if err != nil {
		return nil, err
	}
	var c Curves
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if c.Format != CurvesFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, c.Format, CurvesFormat)
	}
	for _, q := range c.Queries {
		for i, p := range q.Points {
			if i > 0 && p.DelaySeconds <= q.Points[i-1].DelaySeconds {
				return nil, fmt.Errorf("%s: query %s: point %d: delaySeconds %v after %v, want increasing delays", path, q.Query, i, p.DelaySeconds, q.Points[i-1].DelaySeconds)
			}
		}
	}
	return &c, nil
}
