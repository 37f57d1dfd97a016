package scenario

import (
	"fmt"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// Warnings returns what in s runs but probably not as meant, one line
// each in the form "KEY.PATH: message", in the order of the keys in the
// schema; nil when there is nothing to say. s is assumed valid. The
// warnings are:
//
//   - workload.profile lasts longer than duration: the profile is cut
//     where the duration ends, and its later segments never run;
//   - trigger is not shorter than duration (duration is shorter than one
//     trigger): every original arrives by the first trigger, so all the
//     traffic lands in a single batch.
//
// They do not name the file, so that summary.json (which lists them
// under "warnings") does not depend on where the scenario was read from;
// WarningLines adds it for the command line.
func (s *Scenario) Warnings() []string {
	var out []string
	if s.Trigger > 0 && s.Duration > 0 && s.Trigger >= s.Duration {
		out = append(out, fmt.Sprintf("trigger: %s is not shorter than duration (%s): every original arrives by the first trigger, so the whole run's traffic lands in one batch",
			s.Trigger, s.Duration))
	}
	var total, cutStart Duration
	cut := -1
	for i, seg := range s.Workload.Profile {
		if cut < 0 && total+seg.For > s.Duration {
			cut, cutStart = i, total
		}
		total += seg.For
	}
	if cut >= 0 && s.Duration > 0 {
		msg := fmt.Sprintf("workload.profile: lasts %s in all, longer than duration (%s): ", total, s.Duration)
		seg := index("workload.profile", cut)
		switch {
		case cutStart == s.Duration:
			msg += fmt.Sprintf("the run ends where %s begins, so it and the segments after it never run", seg)
		case cut < len(s.Workload.Profile)-1:
			msg += fmt.Sprintf("the run stops %s into it, inside %s, and never reaches the segments after it", s.Duration, seg)
		default:
			msg += fmt.Sprintf("the run stops %s into it, inside %s", s.Duration, seg)
		}
		out = append(out, msg)
	}
	return out
}

// WarningLines returns the warnings as the command line prints them on
// stderr, one line each: "warning: FILE: KEY.PATH: message", escaped like
// an Error.
func (s *Scenario) WarningLines() []string {
	var out []string
	for _, w := range s.Warnings() {
		out = append(out, fileio.Clean("warning: "+s.File+": "+w))
	}
	return out
}
