package runner

import (
	"os"
	"syscall"
	"time"
)

// atime returns a file's last access time.
func atime(fi os.FileInfo) time.Time {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Unix())
	}
	return fi.ModTime()
}
