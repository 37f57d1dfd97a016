// Package echo renders a bad configuration value for an error message, so
// that the generators' checks import nothing of the module outside
// generators/. The loader and the CLI clean every message they print (they
// cut long quoted values and escape what is left), so a value here only
// has to be unambiguous.
package echo

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// maxPlain is the longest value echoed without quotes; the loader's
// cleaning cuts longer quoted values to the same bound.
const maxPlain = 80

// Show renders s as written when that is unambiguous (not empty, at most
// 80 characters, no space, quote, backslash or unprintable character),
// and as a Go string literal otherwise.
func Show(s string) string {
	if s == "" || utf8.RuneCountInString(s) > maxPlain {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r == utf8.RuneError || r == ' ' || r == '"' || r == '\'' || r == '\\' || !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}
