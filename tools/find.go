package tools

import (
	"fmt"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"regexp"
	"strings"
)

func findTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_find"), Cap: "core", Handle: tabTool("browser_find", tabOpts{noPage: true}, find)},
	}
}

// maxFindMatches bounds how many matches browser_find prints.
const maxFindMatches = 50

// parseFindRegex turns "/re/flags" or "re" into a regexp.
func parseFindRegex(s string) (*regexp.Regexp, error) {
	pat, flags := s, ""
	if len(s) >= 2 && s[0] == '/' {
		if i := strings.LastIndexByte(s, '/'); i > 0 {
			pat, flags = s[1:i], s[i+1:]
		}
	}
	prefix := ""
	for _, f := range flags {
		switch f {
		case 'i', 'm', 's':
			prefix += string(f)
		case 'g', 'u':
		default:
			return nil, fmt.Errorf("unsupported regex flag %q", f)
		}
	}
	if prefix != "" {
		pat = "(?" + prefix + ")" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, fmt.Errorf("invalid regex %q: %v", s, err)
	}
	return re, nil
}

func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}

func find(c *tabCall) error {
	text, rx := c.args.String("text", ""), c.args.String("regex", "")
	if (text == "") == (rx == "") {
		return fmt.Errorf("pass exactly one of text or regex")
	}
	match := func(s string) bool { return strings.Contains(strings.ToLower(s), strings.ToLower(text)) }
	if rx != "" {
		re, err := parseFindRegex(rx)
		if err != nil {
			return err
		}
		match = re.MatchString
	}
	snap, err := c.tab.AISnapshot(c.ctx, session.SnapshotOptions{})
	if err != nil {
		return err
	}
	out := findInSnapshot(snap.Text, match, 3)
	if out == "" {
		c.resp.Result("No matches in the page snapshot")
		return nil
	}
	if name := c.args.String("filename", ""); name != "" {
		p, err := c.env.writeOutput(name, "find", ".yml", []byte(out))
		if err != nil {
			return err
		}
		c.resp.Result("- [Find results](%s)", relLink(p))
		return nil
	}
	c.resp.ResultText(fence("yaml", out))
	return nil
}

// findInSnapshot returns the matching lines, each under its ancestor path and
// followed by up to context lines of its subtree; overlapping snippets merge.
func findInSnapshot(snap string, match func(string) bool, context int) string {
	lines := strings.Split(strings.TrimRight(snap, "\n"), "\n")
	keep := make([]bool, len(lines))
	matches := 0
	for i, l := range lines {
		if !match(l) {
			continue
		}
		if matches++; matches > maxFindMatches {
			break
		}
		keep[i] = true
		ind := indentOf(l)
		for j := i - 1; j >= 0 && ind > 0; j-- {
			if k := indentOf(lines[j]); k < ind {
				keep[j] = true
				ind = k
			}
		}
		base := indentOf(l)
		for j, n := i+1, 0; j < len(lines) && n < context && indentOf(lines[j]) > base; j, n = j+1, n+1 {
			keep[j] = true
		}
	}
	var b strings.Builder
	prev := -1
	for i, k := range keep {
		if !k {
			continue
		}
		// Mark skipped siblings; a jump down the ancestor path needs no mark.
		if prev >= 0 && i != prev+1 && indentOf(lines[i]) <= indentOf(lines[prev]) {
			b.WriteString(strings.Repeat(" ", indentOf(lines[i])) + "# …\n")
		}
		b.WriteString(lines[i])
		b.WriteByte('\n')
		prev = i
	}
	if matches > maxFindMatches {
		fmt.Fprintf(&b, "# more than %d matches; refine the search\n", maxFindMatches)
	}
	return strings.TrimRight(b.String(), "\n")
}
