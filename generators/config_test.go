package generators

import (
	"encoding/json"
	"testing"
)

func TestRateJSON(t *testing.T) {
	for _, c := range []struct {
		r    Rate
		want string
	}{
		{Rate(2000), `"2000/s"`},
		{Rate(5000.0 / 3600), `"1.3888888888888888/s"`},
	} {
		got, err := json.Marshal(c.r)
		if err != nil || string(got) != c.want {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", float64(c.r), got, err, c.want)
		}
	}
}
