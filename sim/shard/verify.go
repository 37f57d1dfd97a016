package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"path/filepath"

	"github.com/dedupsim/dedupsim/engines/fileio"
)

// summer counts and hashes what is written to it.
type summer struct {
	h hash.Hash
	n int64
}

func newSummer() *summer { return &summer{h: sha256.New()} }

func (s *summer) Write(p []byte) (int, error) {
	s.n += int64(len(p))
	return s.h.Write(p)
}

func (s *summer) sum() FileSum {
	return FileSum{Bytes: s.n, SHA256: hex.EncodeToString(s.h.Sum(nil))}
}

// verifyFiles checks every job file of the shard against the size and
// SHA-256 its manifest recorded when the shard was published: a file cut,
// emptied or edited since, or one the manifest does not list, is refused
// in one line naming the file and the shard to rerun. It reads each file
// once, streaming.
func verifyFiles(s shardFolder, spark bool) error {
	for _, j := range s.m.Jobs {
		rels := jobRelFiles(j.FileName, spark)
		if len(j.Files) != len(rels) {
			return fmt.Errorf("%s: job %s lists %d files, want %d: rerun shard %d/%d", filepath.Join(s.dir, ManifestFile), j.FileName, len(j.Files), len(rels), s.m.Shard, s.m.Of)
		}
		for _, rel := range rels {
			want, ok := j.Files[filepath.ToSlash(rel)]
			if !ok {
				return fmt.Errorf("%s: lists no checksum for %s: rerun shard %d/%d", filepath.Join(s.dir, ManifestFile), filepath.ToSlash(rel), s.m.Shard, s.m.Of)
			}
			path := filepath.Join(s.dir, rel)
			got, err := fileSum(path)
			if err != nil {
				return err
			}
			if got != want {
				return fmt.Errorf("%s: %d bytes with SHA-256 %.12s..., but the shard wrote %d bytes with %.12s...: the file changed after the shard was published; rerun shard %d/%d",
					path, got.Bytes, got.SHA256, want.Bytes, want.SHA256, s.m.Shard, s.m.Of)
			}
		}
	}
	return nil
}

// fileSum returns the size and SHA-256 of the regular file path.
func fileSum(path string) (FileSum, error) {
	f, err := fileio.Open(path)
	if err != nil {
		return FileSum{}, err
	}
	defer f.Close()
	s := newSummer()
	if _, err := io.Copy(s, f); err != nil {
		return FileSum{}, fmt.Errorf("%s: %w", path, err)
	}
	return s.sum(), nil
}
