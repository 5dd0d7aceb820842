package snapshot

import (
	"strings"
	"unicode/utf8"
)

// Stats describes a rendered snapshot. Chars counts Unicode code points.
type Stats struct {
	Lines           int `json:"lines"`
	Chars           int `json:"chars"`
	Refs            int `json:"refs"`
	InteractiveRefs int `json:"interactive"`
}

// Stats returns the statistics of the tree's rendering.
func (t *Tree) Stats() Stats {
	text := t.Render()
	s := Stats{Lines: countLines(text), Chars: utf8.RuneCountInString(text)}
	t.Walk(func(n *Node, _ int) bool {
		countRef(&s, n)
		return true
	})
	return s
}

// TextStats returns the statistics of a rendered snapshot of any mode, such
// as one cut by Truncate.
func TextStats(text string) Stats {
	s := Stats{Lines: countLines(text), Chars: utf8.RuneCountInString(text)}
	t, err := Parse(text)
	if err != nil {
		return s
	}
	t.Walk(func(n *Node, _ int) bool {
		countRef(&s, n)
		return true
	})
	return s
}

func countRef(s *Stats, n *Node) {
	if n.Ref == "" {
		return
	}
	s.Refs++
	if ClassOf(n.Role) == ClassInteractive {
		s.InteractiveRefs++
	}
}

func countLines(text string) int {
	if text == "" {
		return 0
	}
	return strings.Count(text, "\n") + 1
}

// TruncationMarker ends a snapshot cut by Truncate.
const TruncationMarker = "[...TRUNCATED - page too large]"

// Truncate cuts text to at most maxChars code points on a line boundary and
// appends "\n" + TruncationMarker (which is not counted). If not even the
// first line fits, that line is cut at maxChars. It reports whether it cut
// anything; a maxChars of 0 or less never cuts.
func Truncate(text string, maxChars int) (string, bool) {
	if maxChars <= 0 || len(text) <= maxChars || utf8.RuneCountInString(text) <= maxChars {
		return text, false
	}
	cut, chars := -1, 0
	for i := 0; i <= len(text); {
		j := strings.IndexByte(text[i:], '\n')
		end := i + j
		if j < 0 {
			end = len(text)
		}
		chars += utf8.RuneCountInString(text[i:end])
		if chars > maxChars {
			break
		}
		cut = end
		chars++ // the newline
		i = end + 1
	}
	if cut < 0 {
		// Not even one line fits: cut inside the first one.
		n := 0
		for i := range text {
			if n == maxChars {
				cut = i
				break
			}
			n++
		}
	}
	return text[:cut] + "\n" + TruncationMarker, true
}
