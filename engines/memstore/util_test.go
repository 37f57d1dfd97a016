package memstore

import (
	"os"
	"strings"
	"testing"
)

func writeFileOrFail(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// readStateFile replays one state file of dir on an empty store and
// returns the keys it holds then.
func readStateFile(dir, name, magic string) (map[string]int64, error) {
	s := &Checkpointed{Store: New(), dir: dir}
	defer s.Store.Close()
	if _, err := s.apply(name, magic); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	s.Range(func(k []byte, e int64) bool { out[string(k)] = e; return true })
	return out, nil
}
