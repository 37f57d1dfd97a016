// Package oracles holds no Go code: the real engines' suites are shell,
// Java and Python. This test checks the suites' own guard: a suite whose
// runner exits 0 without running a case (a stub `java` or `python` first
// on the PATH) must fail and say how many cases it ran.
package oracles

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// stubTree copies the suites' scripts into a temporary repository whose
// sim/ and engines/ link to this one's (their case files), with the Maven
// builds marked done, so that the scripts reach their runner at once;
// bin/ holds a java, mvn and python that exit 0 and print nothing. The
// real oracles/ folder is never written.
func stubTree(t *testing.T) (root, bin string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("bash is needed to run the suites' scripts")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	root = t.TempDir()
	bin = filepath.Join(root, "bin")
	for _, d := range []string{"bin", "oracles/lib", "oracles/flink/src", "oracles/kafka-streams/src", "oracles/beam/src", "oracles/spark"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"run", "lib/ran.sh", "flink/run", "flink/pom.xml", "kafka-streams/run", "kafka-streams/pom.xml", "beam/run", "beam/pom.xml", "spark/oracle.py", "spark/speed.py"} {
		b, err := os.ReadFile(filepath.Join(repo, "oracles", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "oracles", f), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"sim", "engines", "oracles/spark/scenarios", "oracles/spark/errors.json"} {
		if err := os.Symlink(filepath.Join(repo, d), filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	// Builds newer than every source: the scripts skip Maven.
	later := time.Now().Add(time.Hour)
	for _, f := range []string{"flink/target-2.3.0/.built", "flink/target-2.3.0/cp.txt", "flink/target-2.0.2/.built", "flink/target-2.0.2/cp.txt", "kafka-streams/target/cp.txt", "beam/target/cp.txt"} {
		p := filepath.Join(root, "oracles", f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, later, later); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"java", "mvn", "python"} {
		if err := os.WriteFile(filepath.Join(bin, s), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, bin
}

func caseFiles(t *testing.T, pattern string) int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join("..", pattern))
	if err != nil || len(m) == 0 {
		t.Fatalf("no case files %s", pattern)
	}
	return len(m)
}

// TestSuitesFailWhenNothingRan: with java a stub that exits 0, oracles/run
// flink, kafka-streams and beam each exit non-zero and print that they ran
// 0 of their case files (before, every one said it agreed, exit 0).
func TestSuitesFailWhenNothingRan(t *testing.T) {
	root, bin := stubTree(t)
	for _, c := range []struct {
		suite string
		args  []string
		want  string
	}{
		{"flink", []string{"--flink", "all"}, "Flink 2.3.0 SQL end to end: ran 0 of " + strconv.Itoa(caseFiles(t, "sim/flink/testdata/*.json"))},
		{"kafka-streams", nil, "kafka-streams oracle: ran 0 of " + strconv.Itoa(caseFiles(t, "sim/kstreams/testdata/cases/*.json"))},
		{"beam", nil, "beam oracle: ran 0 of " + strconv.Itoa(caseFiles(t, "sim/beam/testdata/cases/*.json"))},
	} {
		t.Run(c.suite, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(root, "oracles", "run"), append([]string{c.suite}, c.args...)...)
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DEDUPSIM_ORACLE_WORK="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("oracles/run %s with a stub java: exit 0, want a failure; output:\n%s", c.suite, out)
			}
			if !strings.Contains(string(out), c.want) {
				t.Errorf("output does not say %q:\n%s", c.want, out)
			}
			if strings.Contains(string(out), "every suite agrees") {
				t.Errorf("output says every suite agrees:\n%s", out)
			}
		})
	}
}

// TestSparkSummaryFailsWhenNothingRan: oracle.py with a stub simulate and a
// venv whose python runs nothing exits non-zero and prints "ran 0 of N".
func TestSparkSummaryFailsWhenNothingRan(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatal("python3 is needed to run oracles/spark/oracle.py")
	}
	root, bin := stubTree(t)
	venv := t.TempDir()
	if err := os.MkdirAll(filepath.Join(venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(bin, "python"), filepath.Join(venv, "bin", "python")); err != nil {
		t.Fatal(err)
	}
	sim := filepath.Join(bin, "java") // any stub: exits 0, prints nothing
	cmd := exec.Command("python3", filepath.Join(root, "oracles", "spark", "oracle.py"), "--simulate", sim, "--work", t.TempDir(), "--venv", venv, "--only", "chain")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("oracle.py with a stub python: exit 0, want a failure; output:\n%s", out)
	}
	if !regexp.MustCompile(`oracle: ran 0 of [1-9]`).Match(out) {
		t.Errorf("output does not say it ran 0 of its cases:\n%s", out)
	}
}
