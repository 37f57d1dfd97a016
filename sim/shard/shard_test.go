package shard

import (
	"strings"
	"testing"
)

// TestParseSpec: K counts from 0 to N-1; anything else is refused with a
// line that echoes the value.
func TestParseSpec(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Spec
	}{{"0/1", Spec{0, 1}}, {"0/4", Spec{0, 4}}, {"3/4", Spec{3, 4}}, {" 2 / 5 ", Spec{2, 5}}, {"99999/100000", Spec{99999, 100000}}} {
		got, err := ParseSpec(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"4/4", `"4/4": K counts from 0`},
		{"1/1", `"1/1": K counts from 0`},
		{"0/0", `"0/0": want K/N`},
		{"-1/3", `"-1/3": want K/N`},
		{"1", `"1": want K/N`},
		{"1/2/3", `"1/2/3": want K/N`},
		{"0/100001", `"0/100001": want K/N`},
		{"a/b", `"a/b": want K/N`},
		{"", `"": want K/N`},
	} {
		if _, err := ParseSpec(c.in); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseSpec(%q): %v; want an error starting %q", c.in, err, c.want)
		}
	}
}

// TestSpecSplitsEveryJobOnce: for every job count and N, each job is
// owned by exactly one shard, the shards' sizes differ by at most one,
// and job i is in shard i mod N.
func TestSpecSplitsEveryJobOnce(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for jobs := 0; jobs <= 30; jobs++ {
			sizes := make([]int, n)
			for i := range jobs {
				owners := 0
				for k := range n {
					if (Spec{K: k, N: n}).Owns(i) {
						owners++
						sizes[k]++
						if k != i%n {
							t.Fatalf("N=%d: job %d in shard %d", n, i, k)
						}
					}
				}
				if owners != 1 {
					t.Fatalf("N=%d: job %d in %d shards", n, i, owners)
				}
			}
			lo, hi := jobs, 0
			for _, s := range sizes {
				lo, hi = min(lo, s), max(hi, s)
			}
			if jobs > 0 && hi-lo > 1 {
				t.Errorf("N=%d, %d jobs: shard sizes %v", n, jobs, sizes)
			}
		}
	}
}
