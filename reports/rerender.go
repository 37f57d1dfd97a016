package reports

import (
	"fmt"

	"github.com/dedupsim/dedupsim/metrics"
)

// Rerender redraws the report of the results folder dir in place, with the
// guarantees of a run's results: the folder's files are linked into a
// staging folder beside it, the report is rendered there, and the staging
// folder replaces dir in one step, so a failure or a kill leaves dir as it
// was. dir must be a results folder dedupsim wrote (it holds
// metrics.MarkerFile).
func Rerender(dir string) error {
	// Checked before anything is staged; streamed, so that the check
	// holds no more than the report does.
	if _, err := loadResults(dir); err != nil {
		return err
	}
	if !metrics.IsResultsFolder(dir) {
		return fmt.Errorf("%s: not a results folder dedupsim wrote (it has no %s file); refusing to rewrite it (run the scenario again to get one)", dir, metrics.MarkerFile)
	}
	st, err := metrics.Stage(dir)
	if err != nil {
		return err
	}
	defer st.Discard()
	if err := st.LinkFrom(dir); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := Render(st.Dir); err != nil {
		return err
	}
	return st.Publish()
}
