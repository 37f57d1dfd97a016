package echo

import "testing"

func TestShow(t *testing.T) {
	long := ""
	for range 81 {
		long += "x"
	}
	for _, c := range []struct{ in, want string }{
		{"uuid", "uuid"},
		{"", `""`},
		{"a b", `"a b"`},
		{"a\x1bb", `"a\x1bb"`},
		{`a"b`, `"a\"b"`},
		{long, `"` + long + `"`},
	} {
		if got := Show(c.in); got != c.want {
			t.Errorf("Show(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
