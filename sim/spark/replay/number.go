package replay

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// decimal is a JSON number as digits x 10^exp, normalised so that equal
// values have equal representations (1, 1.0 and 10e-1 alike). It is
// computed from the text alone, so a hostile exponent such as 1e999999999
// costs nothing.
type decimal struct {
	neg    bool
	digits string // no leading or trailing zeros; "" for zero
	exp    int64
}

func parseDecimal(s string) (decimal, bool) {
	var d decimal
	if strings.HasPrefix(s, "-") {
		d.neg, s = true, s[1:]
	}
	mant, expPart, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		e, err := strconv.ParseInt(expPart, 10, 64)
		if err != nil || e > math.MaxInt32 || e < math.MinInt32 {
			return d, false
		}
		d.exp = e
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart == "" && frac == "" {
		return d, false
	}
	for _, c := range intPart + frac {
		if c < '0' || c > '9' {
			return d, false
		}
	}
	digits := intPart + frac
	d.exp -= int64(len(frac))
	digits = strings.TrimLeft(digits, "0")
	trimmed := strings.TrimRight(digits, "0")
	d.exp += int64(len(digits) - len(trimmed))
	d.digits = trimmed
	if d.digits == "" {
		d.neg, d.exp = false, 0
	}
	return d, true
}

// canonical renders d uniquely.
func (d decimal) canonical() string {
	if d.digits == "" {
		return "0"
	}
	sign := ""
	if d.neg {
		sign = "-"
	}
	return fmt.Sprintf("%s%se%d", sign, d.digits, d.exp)
}

// micros returns d seconds in microseconds, truncated toward zero.
func (d decimal) micros() (int64, bool) {
	if d.digits == "" {
		return 0, true
	}
	e := d.exp + 6
	digits := d.digits
	switch {
	case e < 0:
		if int64(len(digits)) <= -e {
			return 0, true
		}
		digits = digits[:int64(len(digits))+e]
	case e > 0:
		if int64(len(digits))+e > 19 {
			return 0, false
		}
		digits += strings.Repeat("0", int(e))
	}
	v, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if d.neg {
		v = -v
	}
	return v, true
}
