// Package clip shortens values an agent or a user passed before they are
// quoted back in an error: an error names the bad value, but a 1 MB argument
// must not turn into a 1 MB answer.
package clip

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Max is how many characters of a value Quote keeps.
const Max = 100

// Quote returns s as a Go-quoted string when it has at most Max characters,
// and otherwise its first Max characters quoted with "…" and followed by its
// length: "AAAA…" (1048576 chars). Invalid UTF-8 is quoted as escapes.
func Quote(s string) string {
	if len(s) <= Max {
		return strconv.Quote(s)
	}
	n := utf8.RuneCountInString(s)
	if n <= Max {
		return strconv.Quote(s)
	}
	return fmt.Sprintf("%s (%d chars)", strconv.Quote(Prefix(s, Max)+"…"), n)
}

// Prefix returns the first n characters (runes) of s.
func Prefix(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// Short is s unquoted when it has at most Max characters, and otherwise
// its first Max characters, "…" and its length: for URLs and names that
// read better bare.
func Short(s string) string {
	if len(s) <= Max {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= Max {
		return s
	}
	return fmt.Sprintf("%s… (%d chars)", Prefix(s, Max), n)
}

// Words shortens, in a message, every run of non-space characters longer
// than 2·Max to its first Max characters, "…" and its length: the backstop
// for messages that quote a value whole (a browser's, the OS's), so a
// megabyte argument cannot come back in an error.
func Words(s string) string {
	if len(s) <= 2*Max {
		return s
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			b.WriteString(shortRun(s[start:end]))
			start = -1
		}
	}
	for i, r := range s {
		if unicode.IsSpace(r) {
			flush(i)
			b.WriteRune(r)
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return b.String()
}

func shortRun(w string) string {
	if len(w) <= 2*Max {
		return w
	}
	n := utf8.RuneCountInString(w)
	if n <= 2*Max {
		return w
	}
	return fmt.Sprintf("%s… (%d chars)", Prefix(w, Max), n)
}

// FirstLine is s up to its first newline.
func FirstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
