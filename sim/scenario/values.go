package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dedupsim/dedupsim/engines/interval"
)

// Duration is a span of time in a scenario. It is a time.Duration that
// renders in JSON the way interval.Format writes it ("2h", "30s", "7d"), so
// the resolved scenario reads like the file it came from.
type Duration time.Duration

// Std returns d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// Micros returns d in whole microseconds, the unit of generated rows.
func (d Duration) Micros() int64 { return int64(time.Duration(d) / time.Microsecond) }

// String returns d as interval.Format renders it.
func (d Duration) String() string { return interval.Format(time.Duration(d)) }

// MarshalJSON renders d as a JSON string such as "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Rate is a rate of events per second.
type Rate float64

// ParseRate parses a rate: "2000/s", "120/m", "5000/h" (also /sec, /second,
// /min, /minute, /hour), or a bare number of events per second. Zero is a
// valid rate (a stall). Non-finite numbers are errors; a negative rate
// parses, and Validate reports it, so that the message can say what range
// was expected.
func ParseRate(s string) (Rate, error) {
	num, unit, hasUnit := strings.Cut(strings.TrimSpace(s), "/")
	num = strings.TrimSpace(num)
	per := 1.0
	if hasUnit {
		switch strings.ToLower(strings.TrimSpace(unit)) {
		case "s", "sec", "second":
			per = 1
		case "m", "min", "minute":
			per = 60
		case "h", "hour":
			per = 3600
		default:
			return 0, fmt.Errorf("unknown rate unit %q (want /s, /m or /h)", unit)
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number", num)
	}
	return Rate(v / per), nil
}

// String renders r as events per second, "2000/s".
func (r Rate) String() string { return strconv.FormatFloat(float64(r), 'g', -1, 64) + "/s" }

// MarshalJSON renders r as a JSON string such as "2000/s".
func (r Rate) MarshalJSON() ([]byte, error) { return json.Marshal(r.String()) }
