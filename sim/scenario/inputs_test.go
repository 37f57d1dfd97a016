package scenario

// Regression tests for inputs that passed validation and then panicked,
// hung or ate memory, for the limits on what a scenario may ask, and for
// how messages echo what the user wrote.

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// base is a valid scenario; the tests add or replace lines of it.
const base = `name: t
duration: 1h
workload:
  rate: 10/s
queries:
  - name: q
    query: dropDuplicates(["event_id"])
`

// parseDoc parses doc as file f with the fake planner, failing the test
// on a panic with the input that caused it.
func parseDoc(t *testing.T, doc string) (*Scenario, error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panic on\n%s\n%v", doc, r)
		}
	}()
	return parse([]byte(doc), "t.yaml", fakeQueries())
}

// wantError checks that doc is rejected with exactly one problem, at path,
// whose line contains every one of parts.
func wantError(t *testing.T, doc, path string, parts ...string) {
	t.Helper()
	s, err := parseDoc(t, doc)
	if err == nil {
		t.Fatalf("accepted (trigger %s):\n%s", s.Trigger, doc)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one problem, got %d:\n%v", len(lines), err)
	}
	var se *Error
	if !errors.As(err, &se) || se.Path != path {
		t.Fatalf("problem at %q, want %q: %v", se.Path, path, err)
	}
	for _, p := range parts {
		if !strings.Contains(lines[0], p) {
			t.Errorf("message lacks %q:\n%s", p, lines[0])
		}
	}
}

// withinSeconds runs f: a read that hangs on a FIFO or streams /dev/zero
// forever would never return, and the test binary's own timeout then
// fails the test with every goroutine's stack. No wall-clock deadline of
// its own decides the verdict, so a slow machine cannot fail it.
func withinSeconds(t *testing.T, what string, f func()) {
	t.Helper()
	f()
}

// specialFiles returns a FIFO and a symlink to /dev/zero in dir.
func specialFiles(t *testing.T, dir, base string) (fifo, zero string) {
	t.Helper()
	fifo = filepath.Join(dir, base+"-fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero = filepath.Join(dir, base+"-zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	return fifo, zero
}

func TestTriggerBelowOneMillisecond(t *testing.T) {
	// 500ns was accepted and divided by zero in the runner (trigger
	// micros 0); Spark's trigger intervals are whole milliseconds.
	wantError(t, base+"trigger: 500ns\n", "trigger", "at least 1ms", "got 500ns")
	wantError(t, base+"trigger: 1500us\n", "trigger", "whole number of milliseconds", "got 1.5ms")
	if _, err := parseDoc(t, base+"trigger: 1ms\n"); err != nil {
		t.Fatalf("1ms: %v", err)
	}
}

func TestEmpiricalUnbalancedQuote(t *testing.T) {
	// FieldPos was called before the error check and panicked.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q.csv"), []byte("1s\n\"2s\n3s\n"), 0o644)
	doc := strings.Replace(base, "rate: 10/s", "rate: 10/s\n  arrivalDelay: {dist: empirical, file: q.csv}", 1)
	s, err := parse([]byte(doc), filepath.Join(dir, "t.yaml"), fakeQueries())
	if err == nil {
		t.Fatalf("accepted: %+v", s.Workload.ArrivalDelay)
	}
	if !strings.Contains(err.Error(), "workload.arrivalDelay.file: q.csv: line 2: ") {
		t.Fatalf("got %v", err)
	}
}

func TestEmpiricalDoesNotEchoAnUnrelatedFile(t *testing.T) {
	dir := t.TempDir()
	secret := "root:x:0:0:root:/root:/bin/bash\x1b[2J\n"
	os.WriteFile(filepath.Join(dir, "passwd"), []byte(secret), 0o644)
	doc := strings.Replace(base, "rate: 10/s", "rate: 10/s\n  arrivalDelay: {dist: empirical, file: passwd}", 1)
	_, err := parse([]byte(doc), filepath.Join(dir, "t.yaml"), fakeQueries())
	if err == nil {
		t.Fatal("accepted /etc/passwd as delays")
	}
	msg := err.Error()
	want := `workload.arrivalDelay.file: passwd: line 1: must be one duration per line`
	if !strings.Contains(msg, want) {
		t.Errorf("message lacks %q:\n%s", want, msg)
	}
	if strings.Contains(msg, "/bin/bash") || strings.Contains(msg, "\x1b") {
		t.Errorf("message echoes the file's line:\n%s", msg)
	}
}

func TestSpecialFilesDoNotHang(t *testing.T) {
	dir := t.TempDir()
	fifo, zero := specialFiles(t, dir, "scenario")
	for _, p := range []string{fifo, zero} {
		withinSeconds(t, p, func() {
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s) = %v, want not a regular file", p, err)
			}
		})
	}
	dfifo, dzero := specialFiles(t, dir, "delays")
	for _, p := range []string{dfifo, dzero} {
		sc := filepath.Join(dir, "uses-"+filepath.Base(p)+".yaml")
		doc := strings.Replace(base, "rate: 10/s", "rate: 10/s\n  arrivalDelay: {dist: empirical, file: "+filepath.Base(p)+"}", 1)
		os.WriteFile(sc, []byte(doc), 0o644)
		withinSeconds(t, p, func() {
			_, err := Load(sc)
			if err == nil || !strings.Contains(err.Error(), "workload.arrivalDelay.file: ") || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("Load(%s) = %v, want not a regular file at workload.arrivalDelay.file", sc, err)
			}
		})
	}
}

func TestMessagesEscapeAndCutValues(t *testing.T) {
	long := strings.Repeat("n", 5000)
	longKey := strings.Repeat("k", 1000)
	cases := []struct{ doc, want, not string }{
		{strings.Replace(base, "name: t", "name: "+`"`+`evil\e[31m\e]0;title\a"`, 1),
			`name: must be ` + fileSafeWant + `, got "evil\x1b[31m\x1b]0;title\a"`, "\x1b"},
		{strings.Replace(base, "name: t", "name: "+long, 1),
			`got "` + long[:80] + `"...`, long[:81]},
		{base + "store: " + long + "\n", `store: must be one of memory, pebble, got "` + long[:80] + `"...`, long[:81]},
		{base + `"` + `k\e[2J": 1` + "\n", `"k\x1b[2J": unknown key`, "\x1b"},
		{base + longKey + ": 1\n", `"` + longKey[:80] + `"...: unknown key`, longKey[:81]},
	}
	for _, c := range cases {
		_, err := parseDoc(t, c.doc)
		if err == nil {
			t.Fatalf("accepted:\n%.200s", c.doc)
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("message lacks %q:\n%.400s", c.want, msg)
		}
		if strings.Contains(msg, c.not) {
			t.Errorf("message holds %q raw:\n%.400q", c.not, msg)
		}
		if len(msg) > 1000 {
			t.Errorf("message of %d bytes", len(msg))
		}
	}
	// The file name, from the command line, is escaped too.
	e := &Error{File: "a\x1bb.yaml", Path: "name", Msg: "must be set"}
	if got := e.Error(); got != `scenario a\x1bb.yaml: name: must be set` {
		t.Errorf("got %q", got)
	}
}

func TestRateAndProfileTogether(t *testing.T) {
	doc := strings.Replace(base, "rate: 10/s", "rate: 10/s\n  profile:\n    - {for: 10m, rate: 5/s}", 1)
	wantError(t, doc, "workload.rate", "must not be set together with workload.profile")
}

func TestLimits(t *testing.T) {
	withWorkload := func(lines string) string { return strings.Replace(base, "rate: 10/s", lines, 1) }
	t.Run("rows per batch", func(t *testing.T) {
		wantError(t, withWorkload("rate: 1e8/s"), "workload.rate", "at most 5000000 rows per batch", "got about 1000000000 rows per batch")
		// 5e5/s for 10s is exactly at the limit; retries push it past.
		if _, err := parseDoc(t, withWorkload("rate: 5e5/s")); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		wantError(t, withWorkload("rate: 5e5/s\n  retries: {probability: 0.5, delay: {dist: constant, value: 1s}}"),
			"workload.rate", "about 7500000 rows per batch")
		wantError(t, withWorkload("rate: 5e5/s\n  retries: {probability: 0.5, copies: {dist: geometric, mean: 3}, delay: {dist: constant, value: 1s}}"),
			"workload.rate", "about 12500000 rows per batch")
		wantError(t, withWorkload("profile:\n    - {for: 10m, rate: 10/s}\n    - {for: 10m, rate: 1e6/s}"),
			"workload.profile[1].rate", "rows per batch")
		if _, err := parseDoc(t, withWorkload("rate: 1e8/s")+"trigger: 10ms\n"); err != nil {
			t.Fatalf("1e8/s with a 10ms trigger: %v", err)
		}
	})
	t.Run("heartbeat", func(t *testing.T) {
		wantError(t, withWorkload("rate: 10/s\n  heartbeat: 1us"), "workload.heartbeat", "at least 1ms")
		wantError(t, withWorkload("rate: 10/s\n  heartbeat: 999us"), "workload.heartbeat", "at least 1ms")
		// Shorter than the trigger is legitimate: several heartbeats per
		// batch, bounded by the rows-per-batch limit.
		if _, err := parseDoc(t, withWorkload("rate: 10/s\n  heartbeat: 1ms")); err != nil {
			t.Fatalf("1ms heartbeat: %v", err)
		}
		wantError(t, withWorkload("rate: 10/s\n  heartbeat: 1ms")+"trigger: 3h\n", "workload.heartbeat", "rows per batch")
	})
	t.Run("segment below the trigger", func(t *testing.T) {
		wantError(t, withWorkload("profile:\n    - {for: 10m, rate: 10/s}\n    - {for: 5s, rate: 0}"),
			"workload.profile[1].for", "at least the trigger (10s)", "got 5s")
		if _, err := parseDoc(t, withWorkload("profile:\n    - {for: 10m, rate: 10/s}\n    - {for: 10s, rate: 0}")); err != nil {
			t.Fatalf("a segment of one trigger: %v", err)
		}
	})
	t.Run("jobs", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("name: t\nduration: 1h\nworkload: {rate: 10/s}\nqueries:\n")
		for i := range 1001 {
			b.WriteString("  - {name: q" + strconv.Itoa(i) + ", query: 'dropDuplicates([\"event_id\"])'}\n")
		}
		wantError(t, b.String(), "queries", "at most 1000 jobs per run", "got 1001 jobs")

		var d strings.Builder
		d.WriteString("name: t\nduration: 1h\nworkload: {rate: 10/s}\nqueries:\n")
		for i := range 10 {
			d.WriteString("  - {name: w" + strconv.Itoa(i) + `, query: 'withWatermark("event_time", "1 minute").dropDuplicates(["event_id", "event_time"])'}` + "\n")
		}
		d.WriteString("  - {name: plain, query: 'dropDuplicates([\"event_id\"])'}\nsweep:\n  delay: [")
		for i := range 100 {
			if i > 0 {
				d.WriteString(", ")
			}
			d.WriteString(strconv.Itoa(i+1) + "m")
		}
		d.WriteString("]\n")
		// 10 watermarked queries x 100 delays + 1 query without a
		// watermark (run once) = 1001 jobs.
		wantError(t, d.String(), "sweep.delay", "at most 1000 jobs per run", "got 1001 jobs")
	})
}

func TestWarnings(t *testing.T) {
	cases := []struct {
		doc  string
		want []string
	}{
		{base, nil},
		{strings.Replace(base, "rate: 10/s", "profile:\n    - {for: 50m, rate: 10/s}\n    - {for: 20m, rate: 0}\n    - {for: 5m, rate: 1/s}", 1),
			[]string{"workload.profile: lasts 1h15m in all, longer than duration (1h): the run stops 1h into it, inside workload.profile[1], and never reaches the segments after it"}},
		{base + "trigger: 1h\n",
			[]string{"trigger: 1h is not shorter than duration (1h): every original arrives by the first trigger, so the whole run's traffic lands in one batch"}},
		{strings.Replace(base, "duration: 1h", "duration: 30s", 1) + "trigger: 1m\n",
			[]string{"trigger: 1m is not shorter than duration (30s): every original arrives by the first trigger, so the whole run's traffic lands in one batch"}},
	}
	for _, c := range cases {
		s, err := parseDoc(t, c.doc)
		if err != nil {
			t.Fatalf("%v", err)
		}
		got := s.Warnings()
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("warnings\n%q\nwant\n%q", got, c.want)
		}
		lines := s.WarningLines()
		for i := range lines {
			if want := "warning: t.yaml: " + c.want[i]; lines[i] != want {
				t.Errorf("line %q, want %q", lines[i], want)
			}
		}
	}
}

func TestOneProblemPerValue(t *testing.T) {
	// A heartbeat below a microsecond is reported by the workload check
	// only, not again by the limit of 1ms.
	wantError(t, strings.Replace(base, "rate: 10/s", "rate: 10/s\n  heartbeat: 500ns", 1), "workload.heartbeat", "at least 1µs")
	// A rate past its own maximum is not reported again as too many rows.
	wantError(t, strings.Replace(base, "rate: 10/s", "rate: 2e9/s", 1), "workload.rate", "must be at most 1e+09/s")
}

func TestStartRange(t *testing.T) {
	// A start at the end of year 9999 ran, and wrote times of year 10000
	// that timeseries.csv cannot be read back with.
	wantError(t, base+"start: 9999-12-31T23:30:00Z\n", "start", "from 1000-01-01 to before 9000-01-01", "got 9999-12-31T23:30:00Z")
	wantError(t, base+"start: 0001-01-01T00:00:00Z\n", "start", "from 1000-01-01")
	for _, ok := range []string{"1000-01-01T00:00:00Z", "8999-12-31T23:59:59Z", "1970-01-01T00:00:00Z"} {
		if _, err := parseDoc(t, base+"start: "+ok+"\n"); err != nil {
			t.Errorf("start %s: %v", ok, err)
		}
	}
}

func TestSweepDelayBelowOneMillisecond(t *testing.T) {
	// 100us and 200us both ran as duplicate "0s" jobs.
	wantError(t, base+"sweep:\n  delay: [100us, 1s]\n", "sweep.delay[0]", "whole number of milliseconds", "got 100µs")
	wantError(t, base+"sweep:\n  delay: [1s, 1500us]\n", "sweep.delay[1]", "whole number of milliseconds", "got 1.5ms")
}

func TestTriggerOfOneMicrosecondInWords(t *testing.T) {
	// "1 microsecond" was truncated to 0 and refused as "got 0s".
	wantError(t, base+"trigger: 1 microsecond\n", "trigger", "at least 1ms", "got 1µs")
}
