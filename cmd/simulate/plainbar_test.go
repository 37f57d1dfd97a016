package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestPlainProgressLine: with stderr not a terminal, long work prints a
// plain line every interval of the (fake) clock, and nothing in between.
func TestPlainProgressLine(t *testing.T) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	b := newPlainBar(&out, "quickstart", 30*time.Second, now)
	b.Start(3600)
	clock = clock.Add(10 * time.Second)
	b.Add(600)
	if out.Len() != 0 {
		t.Fatalf("a line before the interval: %q", out.String())
	}
	clock = clock.Add(25 * time.Second)
	b.Add(300)
	want := "progress: quickstart: 15m of 1h simulated (25%), 35s elapsed\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
	clock = clock.Add(5 * time.Second)
	b.Add(900)
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("a second line 5 s after the first: %q", out.String())
	}
	b.finish()
}
