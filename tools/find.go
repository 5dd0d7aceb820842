package tools

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

func findTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_find"), Cap: "core", Handle: tabTool("browser_find", tabOpts{noPage: true}, find)},
	}
}

// Bounds of a browser_find answer.
const (
	// maxFindMatches bounds how many matches browser_find lists.
	maxFindMatches = 20
	// findBudget bounds the characters of the listing.
	findBudget = 4000
)

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
			return nil, fmt.Errorf("unsupported regex flag %s: use i, m or s, e.g. \"/pricing/i\"", clip.Quote(string(f)))
		}
	}
	if prefix != "" {
		pat = "(?" + prefix + ")" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": `"); i > 0 {
			msg = msg[:i] // Go quotes the whole pattern again
		}
		return nil, fmt.Errorf("invalid regex %s: %s; fix it, or search plain text with text", clip.Quote(s), msg)
	}
	return re, nil
}

// find lists the elements of the page's snapshot that match, ranked (exact
// accessible name first, interactive elements before others), each with its
// ref and its context (the landmarks and named elements around it).
func find(c *tabCall) error {
	text, rx := c.args.String("text", ""), c.args.String("regex", "")
	hasText, hasRx := c.args.Has("text"), c.args.Has("regex")
	if hasText == hasRx {
		return fmt.Errorf("pass exactly one of text or regex")
	}
	var m snapshot.Matcher
	var what string
	if hasText {
		if err := checkFindText("text", text); err != nil {
			return err
		}
		m, what = snapshot.TextMatcher(text), text
	} else {
		if err := checkFindText("regex", rx); err != nil {
			return err
		}
		re, err := parseFindRegex(rx)
		if err != nil {
			return err
		}
		m, what = snapshot.RegexMatcher{Regexp: re}, rx
	}
	snap, err := c.tab.AISnapshot(c.ctx, page.SnapshotOptions{})
	if err != nil {
		return err
	}
	tree, err := snap.Tree()
	if err != nil {
		return err
	}
	res := snapshot.Search(tree, m, snapshot.SearchOptions{Max: maxFindMatches})
	if res.Total == 0 {
		c.resp.Result("No matches for %s in the page snapshot: try fewer or shorter words, a case-insensitive regex such as \"/word/i\", or browser_snapshot", clip.Quote(what))
		return nil
	}
	out := snapshot.RenderMatches(res, findBudget)
	if name := c.args.String("filename", ""); name != "" {
		p, err := c.writeOutput(name, "find", ".yml", []byte(out))
		if err != nil {
			return err
		}
		c.resp.Result("- [Find results](%s)", c.env.link(p))
		return nil
	}
	c.resp.ResultText(fence("yaml", out))
	return nil
}
