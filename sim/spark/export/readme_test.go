package export

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeNamesBothSparkLinesAndKeepsPartitions: the export's README
// says the job runs on Spark 3.5 and 4.x (the real-Spark suite runs both),
// and tells the reader to keep the shuffle partitions job.py sets, which
// the prediction assumes, never to change them for speed.
func TestReadmeNamesBothSparkLinesAndKeepsPartitions(t *testing.T) {
	out, _ := exportScenario(t, loadScenario(t, forms), JSON)
	data, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	for _, bad := range []string{"spark.sql.shuffle.partitions=4", "has not been checked", "with Spark 3.5 and classic"} {
		if strings.Contains(readme, bad) {
			t.Errorf("README.md says %q", bad)
		}
	}
	for _, want := range []string{"Spark 3.5 or 4.x", "Keep `spark.sql.shuffle.partitions` as job.py sets it"} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
}

// TestJobPyTurnsConsoleProgressOff: job.py starts Spark without its
// console progress bars, which drown the job's own lines.
func TestJobPyTurnsConsoleProgressOff(t *testing.T) {
	out, _ := exportScenario(t, loadScenario(t, forms), JSON)
	data, err := os.ReadFile(filepath.Join(out, jobFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"spark.ui.showConsoleProgress": "false"`) {
		t.Errorf("job.py does not set spark.ui.showConsoleProgress to false")
	}
}
