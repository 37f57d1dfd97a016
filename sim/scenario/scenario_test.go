package scenario

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dedupsim/dedupsim/engines/interval"
	"github.com/dedupsim/dedupsim/generators"
	"github.com/dedupsim/dedupsim/generators/randvar"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// fakeQueries stands in for sim/spark/chain in the table tests, so that their
// golden files pin this package's messages and not the planner's: it
// accepts every query except those containing "BROKEN".
func fakeQueries() options {
	return options{checkQuery: func(q string) error {
		if strings.Contains(q, "BROKEN") {
			return errors.New("fake planner: the query is marked BROKEN")
		}
		return nil
	}}
}

// golden compares got with the golden file path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sim/scenario -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test ./sim/scenario -run %s -update rewrites it)\n--- got\n%s\n--- want\n%s", path, t.Name(), got, want)
	}
}

// yamlFiles lists the scenario files of a testdata folder.
func yamlFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/%s: %v", dir, err)
	}
	return files
}

func loadWith(t *testing.T, path string, opt options) (*Scenario, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return parse(data, path, opt)
}

// TestGood resolves each good scenario and compares its JSON form with
// testdata/good/NAME.json.
func TestGood(t *testing.T) {
	for _, path := range yamlFiles(t, "good") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := loadWith(t, path, fakeQueries())
			if err != nil {
				t.Fatalf("unexpected errors:\n%v", err)
			}
			got, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			again, _ := json.MarshalIndent(s, "", "  ")
			if string(got) != string(again) {
				t.Fatal("two marshals of the same scenario differ")
			}
			golden(t, strings.TrimSuffix(path, ".yaml")+".json", append(got, '\n'))
		})
	}
}

// TestBad checks the exact error lines of each bad scenario against
// testdata/bad/NAME.err.
func TestBad(t *testing.T) {
	for _, path := range yamlFiles(t, "bad") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := loadWith(t, path, fakeQueries())
			if err == nil {
				t.Fatalf("no error; resolved to %+v", s)
			}
			if s != nil {
				t.Error("a scenario was returned along with errors")
			}
			golden(t, strings.TrimSuffix(path, ".yaml")+".err", []byte(err.Error()+"\n"))
		})
	}
}

// TestErrorsNameFileAndPath checks that every problem of every bad
// scenario is one *Error on one line that names the file and either a key
// path or, for problems no key locates (YAML syntax, the document itself),
// a line.
func TestErrorsNameFileAndPath(t *testing.T) {
	for _, path := range yamlFiles(t, "bad") {
		_, err := loadWith(t, path, fakeQueries())
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, e := range errs {
			var se *Error
			if !errors.As(e, &se) {
				t.Errorf("%s: %T is not a *scenario.Error: %v", path, e, e)
				continue
			}
			line := se.Error()
			switch {
			case se.File != path:
				t.Errorf("%s: error names file %q: %s", path, se.File, line)
			case strings.Contains(line, "\n"):
				t.Errorf("%s: error spans lines: %q", path, line)
			case se.Path != "" && !strings.HasPrefix(line, "scenario "+path+": "+se.Path+": "):
				t.Errorf("%s: error does not start with the file and key path: %s", path, line)
			case se.Path == "" && (se.Line <= 0 || !strings.HasPrefix(line, "scenario "+path+": line ")):
				t.Errorf("%s: error names neither a key path nor a line: %s", path, line)
			}
		}
	}
}

// TestLoadMissingFile checks that a file that cannot be read is one error
// naming it.
func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join("testdata", "no-such-file.yaml"))
	if err == nil || !strings.HasPrefix(err.Error(), "scenario testdata/no-such-file.yaml: cannot read") {
		t.Fatalf("got %v", err)
	}
}

// TestDefaults checks that the minimal scenario resolves to Defaults plus
// its required keys.
func TestDefaults(t *testing.T) {
	s, err := loadWith(t, filepath.Join("testdata", "good", "minimal.yaml"), fakeQueries())
	if err != nil {
		t.Fatal(err)
	}
	d := Defaults()
	got, _ := json.Marshal(s.Workload.Retries)
	want, _ := json.Marshal(generators.Retries{
		Copies:    d.Workload.Retries.Copies,
		Delay:     randvar.Spec{Kind: randvar.KindConstant},
		Timestamp: generators.SameTimestamp,
		Metadata:  []string{generators.MetaAttempt, generators.MetaIngestTime},
	})
	if string(got) != string(want) {
		t.Errorf("retries: got %s, want %s", got, want)
	}
	if s.Seed != 1 || s.Trigger.Std().String() != "10s" || !s.NoDataMicroBatches || s.Store != "memory" ||
		s.Sink.Kind != "append" || s.Workload.Customers != 1000 || s.Workload.IDs != generators.UUIDs ||
		s.Start != d.Start || s.Workload.ArrivalDelay.Kind != randvar.KindConstant {
		t.Errorf("defaults not applied: %+v", s)
	}
}

// TestValidateHandBuilt checks Validate on a scenario built in Go, the way
// other packages' tests build them.
func TestValidateHandBuilt(t *testing.T) {
	s := Defaults()
	s.File = "hand.yaml"
	s.Name = "hand"
	s.Duration = interval.Duration(3600e9)
	r := generators.Rate(10)
	s.Workload.Rate = &r
	s.Queries = []Query{{Name: "q", Query: "dropDuplicates()"}}
	check := func() error {
		p := &problems{file: s.File}
		s.collect(fakeQueries(), p)
		return p.err()
	}
	if err := check(); err != nil {
		t.Fatalf("valid scenario: %v", err)
	}
	s.Workload.Retries.Probability = 0.5
	s.Workload.Retries.Delay = randvar.Spec{Kind: randvar.KindLogNormal, Median: 30, P99: 10}
	s.Workload.ArrivalDelay = randvar.Spec{Kind: randvar.KindExponential, Mean: 2, Median: 1}
	err := check()
	want := "scenario hand.yaml: workload.arrivalDelay.median: must not be set for an exponential distribution (it takes {mean}), got 1s\n" +
		"scenario hand.yaml: workload.retries.delay.p99: must be above the median (30s), got 10s"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}
