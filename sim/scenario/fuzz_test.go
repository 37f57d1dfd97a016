package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics and keeps its promises on any
// input: a scenario it accepts validates and marshals; a scenario it
// rejects gets one line per problem, each naming the file. Interesting
// inputs live in testdata/fuzz/FuzzParse; the good and bad scenarios of
// testdata/ seed the corpus too. Run it with
//
//	go test ./sim/scenario -run '^$' -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	for _, dir := range []string{"good", "bad"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const file = "fuzz.yaml"
		s, err := Parse(data, file)
		if err == nil {
			if s == nil {
				t.Fatal("nil scenario without an error")
			}
			if verr := s.Validate(); verr != nil {
				t.Fatalf("Parse accepted a scenario that Validate rejects: %v", verr)
			}
			if _, merr := json.Marshal(s); merr != nil {
				t.Fatalf("resolved scenario does not marshal: %v", merr)
			}
			return
		}
		if s != nil {
			t.Fatal("a scenario returned along with errors")
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if !strings.HasPrefix(line, "scenario "+file+": ") {
				t.Fatalf("error line does not name the file: %q", line)
			}
		}
	})
}
