package runner

import (
	"os"
)

// Write writes the results files into the folder dir, creating it if
// needed (see WriteFiles). It does not make dir appear atomically: RunTo
// writes into a staging folder and publishes it for that.
func Write(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	return WriteFiles(dir, r)
}
