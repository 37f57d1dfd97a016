package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/dedupsim/dedupsim/sim/statereader"
)

// stateCheckpoint runs doc with --checkpoint on store and returns the
// checkpoint's folder.
func stateCheckpoint(t *testing.T, doc, store string) string {
	t.Helper()
	dir := t.TempDir()
	sc := filepath.Join(dir, "sc.yaml")
	os.WriteFile(sc, []byte(doc), 0o644)
	ck := filepath.Join(dir, "ck")
	if code, _, errs := simulate(t, "run", sc, "--quiet", "--no-report", "--store", store, "--checkpoint", ck, "--out", filepath.Join(dir, "out")); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	return ck
}

// tablewriterRows is how rowsTable drew the table before it streamed:
// tablewriter's own rendering of every row at once, the reference the
// streamed table must equal byte for byte.
func tablewriterRows(t *testing.T, o *statereader.Operator) string {
	t.Helper()
	var b bytes.Buffer
	header := append([]string(nil), o.KeyColumns...)
	if o.HasExpiresAt {
		header = append(header, "expiresAt")
	}
	header = append(header, "partition")
	tb := tablewriter.NewTable(&b,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	tb.Header(header)
	for _, r := range o.Rows {
		row := make([]string, 0, len(header))
		for _, c := range r.Key {
			row = append(row, fmt.Sprint(c.Value))
		}
		if o.HasExpiresAt {
			row = append(row, r.ExpiresAt)
		}
		row = append(row, strconv.Itoa(r.Partition))
		if err := tb.Append(row); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.Render(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func streamedRows(t *testing.T, o *statereader.Operator) string {
	t.Helper()
	var b bytes.Buffer
	if err := rowsTable(context.Background(), &b, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRowsTableDrawsWhatTablewriterDraws: the streamed table is
// tablewriter's, byte for byte, for columns wider and narrower than their
// names, negative and wide integers, and an entry without an expiry.
func TestRowsTableDrawsWhatTablewriterDraws(t *testing.T) {
	o := &statereader.Operator{
		KeyColumns:   []string{"customer_id", "attempt", "event_time"},
		HasExpiresAt: true,
		Rows: []statereader.Row{
			{Key: statereader.Key{{Name: "customer_id", Value: int64(-7)}, {Name: "attempt", Value: int64(1)}, {Name: "event_time", Value: "2026-01-01T00:00:00.000001Z"}}, ExpiresAt: "2026-01-01T00:00:00.000001Z", Partition: 3},
			{Key: statereader.Key{{Name: "customer_id", Value: int64(1234567890123)}, {Name: "attempt", Value: int64(12)}, {Name: "event_time", Value: "2026-01-01T00:00:00.000002Z"}}, Partition: 199},
		},
	}
	if got, want := streamedRows(t, o), tablewriterRows(t, o); got != want {
		t.Fatalf("streamed table:\n%s\ntablewriter's:\n%s", got, want)
	}
	o.HasExpiresAt = false
	o.Rows = o.Rows[1:]
	if got, want := streamedRows(t, o), tablewriterRows(t, o); got != want {
		t.Fatalf("streamed table:\n%s\ntablewriter's:\n%s", got, want)
	}
}

// TestStateListsEveryKeyAsALimitDoes: on both backends, with a spark:
// block (7 partitions) and without, `state --limit -1` prints, byte for
// byte, what a limit above every operator's key count prints, in both
// formats; and with a limit, the JSON is json.MarshalIndent's and each
// table tablewriter's, as before the output streamed.
func TestStateListsEveryKeyAsALimitDoes(t *testing.T) {
	for _, store := range []string{"memory", "pebble"} {
		for _, spark := range []string{"", "spark: {partitions: 7}\n"} {
			name := store
			if spark != "" {
				name += "/partitioned"
			}
			t.Run(name, func(t *testing.T) {
				ck := stateCheckpoint(t, stateScenario+spark, store)
				for _, format := range []string{"table", "json"} {
					code, all, errs := simulate(t, "state", ck, "--limit", "-1", "--format", format)
					if code != 0 {
						t.Fatalf("--limit -1 --format %s: exit %d: %s", format, code, errs)
					}
					code, big, errs := simulate(t, "state", ck, "--limit", "1000000", "--format", format)
					if code != 0 {
						t.Fatalf("--limit 1000000 --format %s: exit %d: %s", format, code, errs)
					}
					if all != big {
						t.Fatalf("--format %s: --limit -1 printed %d bytes, --limit 1000000 %d; they differ", format, len(all), len(big))
					}
					if format == "table" && !strings.Contains(all, "│ 0 ") {
						t.Fatalf("table: no rows:\n%s", all)
					}
				}
				for _, limit := range []int{3, 1000000} {
					st, err := statereader.Read(ck, statereader.Options{Limit: limit})
					if err != nil {
						t.Fatal(err)
					}
					want, err := json.MarshalIndent(st, "", "  ")
					if err != nil {
						t.Fatal(err)
					}
					var b bytes.Buffer
					bw := bufio.NewWriter(&b)
					if err := writeStateJSON(context.Background(), bw, st); err != nil {
						t.Fatal(err)
					}
					bw.Flush()
					if b.String() != string(want)+"\n" {
						t.Fatalf("--limit %d: the JSON written differs from json.MarshalIndent's", limit)
					}
					for _, q := range st.Queries {
						for i := range q.Operators {
							o := &q.Operators[i]
							if len(o.Rows) == 0 {
								t.Fatalf("%s: no rows", q.Name)
							}
							if got, want := streamedRows(t, o), tablewriterRows(t, o); got != want {
								t.Fatalf("%s, --limit %d: the table differs from tablewriter's:\n%s\nwant\n%s", q.Name, limit, got, want)
							}
						}
					}
				}
			})
		}
	}
}

// TestStateListingEveryKeyPrintsNothingOnAFailedCheck: a partition
// holding another's keys (partition 1's store replaced by partition 0's)
// is found by the checks of every key before anything is printed: one
// line naming the folder, nothing on stdout, in both formats.
func TestStateListingEveryKeyPrintsNothingOnAFailedCheck(t *testing.T) {
	ck := stateCheckpoint(t, smallScenario+"spark: {partitions: 7}\n", "pebble")
	state := filepath.Join(ck, "within", "query.0", "state", "0")
	if err := os.RemoveAll(filepath.Join(state, "1")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(state, "1"), os.DirFS(filepath.Join(state, "0"))); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(state, "1") + ": holds a key that Spark's hash places in partition 0 of 7"
	for _, format := range []string{"table", "json"} {
		code, out, errs := simulate(t, "state", ck, "--limit", "-1", "--format", format)
		if code == 0 || out != "" || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, want) {
			t.Errorf("--format %s: exit %d, %d bytes on stdout, stderr %q; want one line with %q and nothing printed", format, code, len(out), errs, want)
		}
	}
}

// bigStateScenario keeps 300,000 keys in one dropDuplicates state.
const bigStateScenario = `name: big
seed: 21
duration: 200s
trigger: 10s
workload:
  rate: 1500/s
  ids: uuid
queries:
  - name: unbounded
    query: dropDuplicates(["event_id"])
`

// peakRSS runs the command with args, its stdout read and dropped, fails
// the test unless it exits with 0, and returns its peak resident memory in
// bytes.
func peakRSS(t *testing.T, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(simulateBinary(t), args...)
	cmd.Stdout = io.Discard
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no resource usage of a child process on this system")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr.String())
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// TestStateListingEveryKeyHoldsFewOfThem: `state --limit -1` on a Pebble
// checkpoint held every key at once, then every row, then the whole
// output, several times the memory of only counting the keys (--limit 0;
// issue #21, the numbers in BENCHMARKS.md, "Numbers behind the code's
// comments"). Its peak must stay within 64 MiB of the count's, in both
// formats.
func TestStateListingEveryKeyHoldsFewOfThem(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command on a checkpoint of 300,000 keys")
	}
	ck := stateCheckpoint(t, bigStateScenario, "pebble")
	base := peakRSS(t, "state", ck, "--limit", "0")
	for _, format := range []string{"table", "json"} {
		peak := peakRSS(t, "state", ck, "--limit", "-1", "--format", format)
		t.Logf("--format %s: peak RSS %d MiB listing every key, %d MiB counting them", format, peak>>20, base>>20)
		if peak > base+64<<20 {
			t.Errorf("--format %s: peak RSS %d MiB listing 300,000 keys, %d MiB only counting them: the listing holds the keys", format, peak>>20, base>>20)
		}
	}
}

// TestStateStopsPromptlyOnSIGINTWhilePrinting: SIGINT while `state --limit
// -1` is printing (its reader slow, the pipe full) stops it at once with
// 130.
func TestStateStopsPromptlyOnSIGINTWhilePrinting(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command on a checkpoint of 300,000 keys")
	}
	ck := stateCheckpoint(t, bigStateScenario, "pebble")
	cmd := exec.Command(simulateBinary(t), "state", ck, "--limit", "-1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	first := make([]byte, 4096)
	if _, err := io.ReadFull(out, first); err != nil {
		t.Fatal(err)
	}
	// The rows are printing; the pipe fills up as nothing more is read.
	time.Sleep(200 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	go func() { done <- cmd.Wait() }()
	// A state that ignored SIGINT would run until the test binary's
	// timeout, which fails the test; no deadline of its own decides.
	<-done
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130", code)
	}
}
