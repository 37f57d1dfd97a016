package calibrate

import (
	"fmt"
	"io"
	"strconv"

	"github.com/dedupsim/dedupsim/engines/fileio"
	"github.com/dedupsim/dedupsim/metrics/progresslog"
)

// Fitter fits the cost model to the progress records of several logs, read
// one after another, as one log: a query's batches may be spread over the
// driver logs of several days, or over a log and the listener's JSON
// lines. A record seen in two logs (same runId, batchId and timestamp) is
// counted once. Memory is bounded by the batches kept, never by the logs'
// length.
type Fitter struct {
	c       *collector
	sources []string
}

// NewFitter returns a Fitter with the options of Fit; opts.Source is
// ignored: each log is named as Read is given it.
func NewFitter(opts Options) (*Fitter, error) {
	c, err := newCollector(opts)
	if err != nil {
		return nil, err
	}
	return &Fitter{c: c}, nil
}

// Read reads one progress log (see progresslog.Reader) named source and
// keeps its batches. An error names source and the line of the record it
// is about.
func (f *Fitter) Read(r io.Reader, source string) error {
	f.sources = append(f.sources, source)
	f.c.opts.Source = source
	rd := progresslog.NewReader(r, source)
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := f.c.add(&p); err != nil {
			return err
		}
	}
}

// Fit fits the model to the batches of every log read. The result's
// Source names the logs: the one log, or the first and how many more.
func (f *Fitter) Fit() (Result, error) {
	f.c.opts.Source = describeSources(f.sources)
	return f.c.fit()
}

// describeSources names the logs of a fit in its errors and its YAML.
func describeSources(s []string) string {
	switch len(s) {
	case 0:
		return "no log"
	case 1:
		return s[0]
	case 2:
		return s[0] + " and " + s[1]
	}
	return s[0] + " and " + strconv.Itoa(len(s)-1) + " more logs"
}

// ReadFile reads the progress log in the regular file path, streamed (see
// Read). A path that does not exist, a folder or another file that is
// not regular is one error naming it.
func (f *Fitter) ReadFile(path string) error {
	file, err := fileio.Open(path)
	if err != nil {
		return fmt.Errorf("%s: %s; want a file of Spark progress records", path, fileio.Reason(err))
	}
	defer file.Close()
	return f.Read(file, path)
}
