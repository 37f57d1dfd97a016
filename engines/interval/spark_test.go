package interval

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const (
	msDay  = 86_400_000
	msHour = 3_600_000
	msMin  = 60_000
)

// TestStringToIntervalSparkSuite replays IntervalUtilsSuite's "string to
// interval" cases (Spark 3.5/4.0): every accepted string with its value,
// every rejected one with the error class Spark 4 gives it.
func TestStringToIntervalSparkSuite(t *testing.T) {
	day := func(d int32, us int64) Calendar { return Calendar{Days: d, Micros: us} }
	ok := map[string]Calendar{
		"3 Week": day(21, 0), "3 Weeks": day(21, 0), "interval 3 week": day(21, 0),
		"3 DAY": day(3, 0), "interval 3 days": day(3, 0),
		"3 HouR": day(0, 3*microsPerHour), "3 MiNuTes": day(0, 3*microsPerMinute),
		"3 Second": day(0, 3*microsPerSecond), "3 MilliSeconds": day(0, 3000), "3 MicroSecond": day(0, 3),
		"-1 MONTH 1 day -1 microseconds":                   {Months: -1, Days: 1, Micros: -1},
		" 123 MONTHS        123 DAYS  123 Microsecond    ": {Months: 123, Days: 123, Micros: 123},
		"interval -1 day +3 Microseconds":                  day(-1, 3),
		"interval -   1 day +     3 Microseconds":          day(-1, 3),
		"  interval  8  years -11 months 123  weeks   -1 day " +
			"23 hours -22 minutes 1 second  -123  millisecond    567 microseconds ": {Months: 85, Days: 860, Micros: 81480877567},
		"1 day 1 year":              {Months: 12, Days: 1},
		"1 day 10 day":              day(11, 0),
		"1 \t day \n 2 \r hour":     day(1, 2*microsPerHour),
		"interval\r1\tday":          day(1, 0),
		"0.1 seconds":               day(0, 100000),
		"1. seconds":                day(0, 1000000),
		"123.001 seconds":           day(0, 123001000),
		"1.001001 seconds":          day(0, 1001001),
		"1 minute 1.001001 seconds": day(0, 61001001),
		"-1.5 seconds":              day(0, -1500000),
		"0.999999999 seconds":       day(0, 999999),
		".999999999 seconds":        day(0, 999999),
		"-.5 seconds":               day(0, -500000),
	}
	for in, want := range ok {
		got, err := StringToInterval(in)
		if err != nil || got != want {
			t.Errorf("StringToInterval(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                                 classEmpty,
		" ":                                classEmpty,
		"\n":                               classEmpty,
		"interval":                         classEmpty,
		"foo":                              classNumber,
		"foo 1 day":                        classNumber,
		"month 3":                          classNumber,
		"+":                                classMissingNumber,
		"-":                                classMissingNumber,
		"+ 2":                              classMissingUnit,
		"1":                                classMissingUnit,
		"1.2":                              classMissingUnit,
		"1 day 2":                          classMissingUnit,
		"1 day -":                          classMissingNumber,
		"-.":                               classMissingUnit,
		"1.5 days":                         classFraction,
		"1. hour":                          classFraction,
		"1.5 minutes":                      classFraction,
		"1 hourX":                          classUnit,
		"~1 hour":                          classNumber,
		"1 Mour":                           classUnit,
		"1a1 hour":                         classValue,
		"1.1a1 seconds":                    classValue,
		"2234567890 days":                  classArithmetic,
		". seconds":                        classValue,
		"interval1 \t day \n 2 \r hour":    classPrefix,
		"中国 interval 1 day":                classNumber,
		"interval 1 day长河":                 classUnit,
		"0.123456789123 seconds":           classPrecision,
		"10 s":                             classUnit,
		"10 sec":                           classUnit,
		"10 min":                           classUnit,
		"1 h":                              classUnit,
		"10ms":                             classValue,
		"10seconds":                        classValue,
		"10 secondss":                      classUnit,
		"1 nanosecond":                     classUnit,
		"9223372036854775808 microseconds": classArithmetic,
	}
	for in, class := range bad {
		_, err := StringToInterval(in)
		var e *Error
		if !errors.As(err, &e) || e.Class != class {
			t.Errorf("StringToInterval(%q): error %v, want class %s", in, err, class)
		}
	}
}

// TestParseSparkWatermarkSuite replays EventTimeWatermarkSuite's
// "SPARK-35815: Support ANSI intervals for delay threshold" and "delay
// threshold should not be negative": the delays withWatermark accepts, in
// milliseconds, and the ones it rejects.
func TestParseSparkWatermarkSuite(t *testing.T) {
	const daysPerMonth = 31
	ok := map[string]int64{
		"3 days": 3 * msDay, "Interval 3 day": 3 * msDay, "inTerval '3' day": 3 * msDay,
		" 5 hours": 5 * msHour, "INTERVAL 5 hour": 5 * msHour, "interval '5' hour": 5 * msHour,
		"\t8 minutes": 8 * msMin, "interval 8 minute": 8 * msMin, "interval '8' minute": 8 * msMin,
		"10 seconds": 10_000, "interval 10 second": 10_000, "interval '10' second": 10_000,
		"1 years": 12 * daysPerMonth * msDay, "interval 1 year": 12 * daysPerMonth * msDay, "interval '1' year": 12 * daysPerMonth * msDay,
		"1 months": daysPerMonth * msDay, "interval 1 month": daysPerMonth * msDay, "interval '1' month": daysPerMonth * msDay,
		"1 day 2 hours 3 minutes 4 seconds":                    msDay + 2*msHour + 3*msMin + 4000,
		" interval 1 day 2 hours 3 minutes 4 seconds":          msDay + 2*msHour + 3*msMin + 4000,
		"\tinterval '1' day '2' hours '3' minutes '4' seconds": msDay + 2*msHour + 3*msMin + 4000,
		"interval '1 2:3:4' day to second":                     msDay + 2*msHour + 3*msMin + 4000,
		" 1 year 2 months":                                     (12*daysPerMonth + 2*daysPerMonth) * msDay,
		"interval 1 year 2 month":                              (12*daysPerMonth + 2*daysPerMonth) * msDay,
		"interval '1' year '2' month":                          (12*daysPerMonth + 2*daysPerMonth) * msDay,
		"\tinterval '1-2' year to month":                       (12*daysPerMonth + 2*daysPerMonth) * msDay,
		// Beyond the suite: forms the same code accepts.
		"1 month -30 days":                                 msDay,
		"4610 milliseconds":                                4610,
		"1500 microseconds":                                1,
		"999 microseconds":                                 0,
		"0 seconds":                                        0,
		"1.5 seconds":                                      1500,
		"interval 1.5 seconds":                             1500,
		"interval -'-10' seconds":                          10_000,
		"INTERVAL '10 seconds'":                            10_000,
		"interval \"2 hours\"":                             2 * msHour,
		"interval 1 week 1 millisecond":                    7*msDay + 1,
		"interval 10 seconds -- a comment":                 10_000,
		"interval /* a /* nested */ comment */ 10 seconds": 10_000,
		"interval '1:30' minute to second":                 90_000,
		"interval '-1 2' day to hour":                      -(msDay + 2*msHour), // rejected below as negative
		"2 weeks":                                          14 * msDay,
		"106751991 days":                                   106751991 * msDay,
	}
	for in, want := range ok {
		if want < 0 {
			continue
		}
		got, err := ParseSpark(in)
		if err != nil || got != want {
			t.Errorf("ParseSpark(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		// The suite's invalid patterns.
		"1 foo":                          "INVALID_UNIT",
		"interva 2 day":                  "UNRECOGNIZED_NUMBER",
		"intrval '3' day":                "UNRECOGNIZED_NUMBER",
		"interval 4 foo":                 "PARSE_SYNTAX_ERROR",
		"interval '5' foo":               "PARSE_SYNTAX_ERROR",
		"interval '1 2:3:4' day to hour": "UNMATCHED_FORMAT_STRING",
		"interval '1 2' year to month":   "UNMATCHED_FORMAT_STRING",
		// Negative delays.
		"-1 year":                     "should not be negative",
		"1 year -13 months":           "should not be negative",
		"1 month -40 days":            "should not be negative",
		"-10 seconds":                 "should not be negative",
		"interval '-1 2' day to hour": "should not be negative",
		// What dedupsim used to accept.
		"10 s": "INVALID_UNIT", "10 sec": "INVALID_UNIT", "10 min": "INVALID_UNIT", "1 h": "INVALID_UNIT",
		"10ms": "INVALID_VALUE", "10seconds": "INVALID_VALUE", "1.5 minutes": "INVALID_FRACTION",
		// The SQL literal's own rules.
		"interval 10s":                       "PARSE_SYNTAX_ERROR",
		"interval 1 month 2 days":            "cannot mix year-month and day-time fields",
		"interval '1 day' hours":             "can only use numbers",
		"interval 10 seconds AS x":           "PARSE_SYNTAX_ERROR",
		"interval 1 nanosecond":              "INVALID_UNIT",
		"interval 1 day to second":           "must be a string",
		"interval '1' year to day":           "not supported",
		"interval '1-2' year to month 1 day": "PARSE_SYNTAX_ERROR",
		"interval":                           "PARSE_SYNTAX_ERROR",
		"intervals 10 seconds":               "PARSE_SYNTAX_ERROR",
		"interval '10 parsecs'":              "INVALID_TYPED_LITERAL",
		// Overflow: getDuration's Math.multiplyExact/addExact.
		"106751992 days":               "long overflow",
		"106751991 days 86399 seconds": "long overflow",
		"interval 106751992 days":      "long overflow",
		"2147483647 months":            "long overflow",
	}
	for in, want := range bad {
		_, err := ParseSpark(in)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseSpark(%q): error %v, want one line containing %q", in, err, want)
		}
	}
}

// TestParseSparkOverflowBoundary pins the largest delay Spark accepts:
// getDuration must fit a long of microseconds, so 9223372036854775807
// microseconds is the last accepted value and one more overflows.
func TestParseSparkOverflowBoundary(t *testing.T) {
	got, err := ParseSpark("9223372036854775807 microseconds")
	if err != nil || got != math.MaxInt64/1000 {
		t.Fatalf("max: %d, %v", got, err)
	}
	if _, err := ParseSpark("9223372036854775807 microseconds 1 microsecond"); err == nil {
		t.Fatal("one microsecond more: accepted")
	}
	// Days and microseconds overflow only together, in getDuration.
	if _, err := ParseSpark("106751991 days 14454775807 microseconds"); err != nil {
		t.Fatalf("106751991 days + the rest of a long: %v", err)
	}
	if _, err := ParseSpark("106751991 days 14454775808 microseconds"); err == nil || !strings.Contains(err.Error(), "long overflow") {
		t.Fatalf("one microsecond beyond a long: %v", err)
	}
}

func TestEcho(t *testing.T) {
	long := strings.Repeat("é", 100)
	got := Echo(long)
	if len(got) > maxEcho+3 || !strings.HasSuffix(got, "...") || !strings.HasPrefix(long, strings.TrimSuffix(got, "...")) {
		t.Errorf("Echo cut badly: %q", got)
	}
	if got := Echo("10\nsec\x00 \"x\""); got != `10\nsec\x00 "x"` {
		t.Errorf("Echo escapes control characters only: %q", got)
	}
	_, err := ParseSpark(strings.Repeat("9", 500) + " parsecs")
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("a long bad delay echoes too much: %d bytes", len(err.Error()))
	}
}

// FuzzParseSpark: no input makes the parser panic; every rejection is one
// line; an accepted delay is a whole number of milliseconds >= 0; and the
// parser agrees with itself on the same input with "interval" prefixed
// when the text is a plain list of number-unit pairs of day-time units.
func FuzzParseSpark(f *testing.F) {
	for _, s := range []string{"10 seconds", "1 minute 30 seconds", "interval '1 2:3:4' day to second", "interval 1 year 2 month",
		"-.5 seconds", "1.5 minutes", "interval 10 seconds -- c", "interval /* x */ 1 day", "106751991 days", "\tinterval '1-2' year to month",
		"INTERVAL '10 seconds'", "interval -'-10' seconds", "1 day 10 day", "9223372036854775807 microseconds"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseSpark(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseSpark(%q): error of several lines: %q", s, err)
			}
			return
		}
		if ms < 0 {
			t.Fatalf("ParseSpark(%q) = %d < 0", s, ms)
		}
	})
}

// TestOverflowNamesBothSparkLines: a delay past a long of microseconds is
// refused with the error each Spark line raises (pyspark 3.5.9: the bare
// ArithmeticException "long overflow"; 4.3.0: the same exception as
// [INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION]).
func TestOverflowNamesBothSparkLines(t *testing.T) {
	_, err := ParseSpark("106751992 days")
	for _, want := range []string{"ArithmeticException: long overflow (Spark 3.5)", "[INTERVAL_ARITHMETIC_OVERFLOW.WITHOUT_SUGGESTION] (Spark 4)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpark(106751992 days) = %v, want an error naming %q", err, want)
		}
	}
}
