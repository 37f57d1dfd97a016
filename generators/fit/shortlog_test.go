package fit

import (
	"strings"
	"testing"
	"time"
)

// TestFitRefusesWhatNoScenarioHolds: a log whose originals all arrive
// within less than one trigger (two rows 2 s apart), or one that arrives
// before the year 1000 (epoch seconds read as such, a zero time), was
// fitted into a scenario the loader refuses, and `simulate fit` blamed
// itself ("the fitted scenario does not load (a bug of fit)"). Fit refuses
// both in one line saying what to change; a smaller trigger fits the short
// log with every profile segment at least a trigger long.
func TestFitRefusesWhatNoScenarioHolds(t *testing.T) {
	at := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	short := []Record{
		{ID: []byte("a"), EventTime: at("2026-03-01T12:00:00Z"), Arrival: at("2026-03-01T12:00:01Z")},
		{ID: []byte("b"), EventTime: at("2026-03-01T12:00:01Z"), Arrival: at("2026-03-01T12:00:02Z")},
	}
	if _, err := Fit(SliceOpener(short), Options{}); err == nil || !strings.Contains(err.Error(), "less than one trigger (10s)") {
		t.Errorf("a log of 2 s with a 10 s trigger: err %v, want a refusal naming the trigger", err)
	}
	r, err := Fit(SliceOpener(short), Options{Trigger: time.Second})
	if err != nil {
		t.Fatalf("the same log with a 1 s trigger: %v", err)
	}
	for i, s := range r.Profile {
		if s.Length < time.Second {
			t.Errorf("profile segment %d lasts %v, less than the trigger", i, s.Length)
		}
	}
	old := []Record{
		{ID: []byte("a"), EventTime: at("0001-01-01T00:00:00Z"), Arrival: at("0001-01-01T00:00:01Z")},
		{ID: []byte("b"), EventTime: at("0001-01-01T00:00:30Z"), Arrival: at("0001-01-01T00:00:31Z")},
	}
	if _, err := Fit(SliceOpener(old), Options{}); err == nil || !strings.Contains(err.Error(), "outside the years a scenario can start in") {
		t.Errorf("a log of the year 1: err %v, want a refusal naming the years", err)
	}
}
