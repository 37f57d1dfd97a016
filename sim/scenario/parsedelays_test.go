package scenario

import (
	"strings"
	"testing"
)

// TestParseDelaysNamesTheLimit: sweep --delay 106752d (one day past what a
// duration holds) was refused as "want a list of non-negative durations",
// as if it were negative or no duration; it names the limit, as the
// scenario's own durations do.
func TestParseDelaysNamesTheLimit(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1m,106752d", `"106752d": want durations of at most 106751d23h47m16.854s (about 292 years)`},
		{"99999999999999999999d", "want durations of at most 106751d"},
		{"1m,-5m", `"-5m": want a list of non-negative durations such as 1m,5m,20m`},
		{"soon", `"soon": want a list of non-negative durations`},
	} {
		_, err := ParseDelays(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseDelays(%q) = %v: want an error with %q", c.in, err, c.want)
		}
	}
	sw, err := ParseDelays("1m,106751d")
	if err != nil || len(sw.Delay) != 2 {
		t.Fatalf("ParseDelays(1m,106751d) = %v, %v: want two delays", sw, err)
	}
}
