package interval

import (
	"encoding/json"
	"testing"
	"time"
)

func TestDurationJSON(t *testing.T) {
	for _, c := range []struct {
		d    Duration
		want string
	}{
		{Duration(2 * time.Hour), `"2h"`},
		{Duration(90 * time.Second), `"1m30s"`},
		{Duration(7 * 24 * time.Hour), `"7d"`},
		{Duration(0), `"0s"`},
	} {
		got, err := json.Marshal(c.d)
		if err != nil || string(got) != c.want {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", time.Duration(c.d), got, err, c.want)
		}
	}
}
