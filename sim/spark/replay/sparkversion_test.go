package replay

import (
	"strings"
	"testing"
)

// TestSparkVersionKey checks the trace key sparkVersion: "3.5" or "4"
// (the default), anything else refused in one line naming the key.
func TestSparkVersionKey(t *testing.T) {
	const q = `"query": "withWatermark(\"t\", \"1 second\").dropDuplicates([\"id\"])"`
	for _, c := range []struct {
		trace, want, err string
	}{
		{`{` + q + `, "steps": [{"addData": [{"id": 1, "t": 1}]}]}`, SparkLatest, ""},
		{`{` + q + `, "sparkVersion": "3.5", "steps": [{"addData": [{"id": 1, "t": 1}]}]}`, Spark35, ""},
		{`{` + q + `, "sparkVersion": "4", "steps": [{"addData": [{"id": 1, "t": 1}]}]}`, SparkLatest, ""},
		{`{` + q + `, "sparkVersion": "3.4", "steps": []}`, "", `sparkVersion: "3.4"; want "3.5" or "4"`},
	} {
		tr, err := Load([]byte(c.trace))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: got %v, want an error with %q", c.trace, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.trace, err)
		}
		if tr.SparkVersion != c.want {
			t.Errorf("%s: SparkVersion %q, want %q", c.trace, tr.SparkVersion, c.want)
		}
	}
}
