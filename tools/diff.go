package tools

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Budgets for the Snapshot section of action responses.
const (
	// diffBudget bounds a diff after an action.
	diffBudget = 6000
	// inlineBudget bounds a whole-page snapshot inlined by --snapshot-mode
	// inline (navigate, or an action that replaced the page).
	inlineBudget = 40000
	// landmarksBudget bounds the one-line outline of a large page after
	// browser_navigate (--snapshot-mode outline): its regions and their
	// refs, so that navigating costs about what upstream's ~400-character
	// answer (a link to a file) costs, and the agent's next call (a
	// browser_find, a region snapshot, outline=true) reads what it needs.
	landmarksBudget = 200
	// actionLandmarksBudget bounds it after an action that moved to
	// another page: the Page section already says where the agent landed.
	actionLandmarksBudget = 120
	// outlineBudget bounds browser_snapshot's outline=true: regions with
	// their counts, headings, fields and buttons by priority.
	outlineBudget = 1500
	// smallPage is the largest snapshot outline mode inlines whole: up to
	// here the whole page costs no more than an outline plus the
	// browser_find an agent would need next, and saves that call.
	smallPage = 2000
	// navFindMatches bounds the matches browser_navigate's find lists.
	navFindMatches = 8
)

// Snapshot modes (--snapshot-mode).
const (
	modeOutline = "outline"
	modeInline  = "inline"
	modeFull    = "full"
	modeNone    = "none"
)

func (c *tabCall) snapshotMode() string {
	if c.env.SnapshotMode == "" {
		return modeOutline
	}
	return c.env.SnapshotMode
}

// addDiff sets the Snapshot section after an action: what the action
// changed, or the new page when it navigated.
func (c *tabCall) addDiff() {
	mode := c.snapshotMode()
	if mode == modeNone {
		return
	}
	if c.typed != nil && mode != modeFull && c.before != nil && c.tab.OnlyTyped(*c.typed) {
		c.resp.SetSnapshot("- No change in the page snapshot but the typed text")
		return
	}
	snap, err := c.tab.AISnapshot(c.ctx, page.SnapshotOptions{})
	if err != nil {
		c.snapshotUnavailable(err)
		return
	}
	// A new document (or no base to diff against: the tab was closed,
	// the browser restarted) is a page new to the agent; a same-document
	// navigation (a fragment, pushState, replaceState) keeps the document
	// and is answered with what changed.
	if mode == modeFull || c.before == nil || c.before.Tab() != c.tab || c.before.Doc() != snap.Doc() {
		c.setFull(snap.Text)
		return
	}
	// The trees are parsed once per snapshot, without focus marks (focus
	// moves with nearly every action; it is noise in a diff).
	prev, err1 := c.before.Tree()
	cur, err2 := snap.Tree()
	if err1 != nil || err2 != nil {
		c.setFull(snap.Text)
		return
	}
	d := snapshot.DiffWith(prev, cur, snapshot.DiffOptions{Budget: diffBudget, Compact: true})
	c.tab.AliasRefs(d.Aliases)
	focus := c.focusMoved(c.before.Text, snap.Text)
	if d.Unchanged {
		if focus != "" {
			c.resp.SetSnapshot(focus)
			return
		}
		c.resp.SetSnapshot("- No change in the page snapshot")
		return
	}
	text := "- Changes:\n" + fence("diff", d.Text)
	if focus != "" {
		text += "\n" + focus
	}
	c.resp.SetSnapshot(text)
}

// focusMoved says where focus went when the action moved it to something
// other than its own target (which an agent expects to hold focus after a
// click or typing): diffs leave the focus mark out.
func (c *tabCall) focusMoved(before, after string) string {
	was, now := activeLine(before), activeLine(after)
	// A focused container without a name (a web component's host when
	// focus is inside its shadow root) says nothing an agent can use.
	if now == "" || now == was || strings.HasPrefix(now, "generic [ref=") {
		return ""
	}
	for _, k := range []string{"target", "startTarget", "endTarget"} {
		if t := c.args.String(k, ""); t != "" && strings.Contains(now, "[ref="+t+"]") {
			return ""
		}
	}
	return "- Focus moved to: " + now
}

// activeLine is the snapshot's focused element, its line without the
// focus mark and list dash, or "".
func activeLine(text string) string {
	i := strings.Index(text, " [active]")
	if i < 0 {
		return ""
	}
	start := strings.LastIndexByte(text[:i], '\n') + 1
	end := strings.IndexByte(text[i:], '\n')
	if end < 0 {
		end = len(text) - i
	}
	line := strings.TrimSpace(text[start : i+end])
	line = strings.TrimPrefix(strings.Replace(line, " [active]", "", 1), "- ")
	// The element, not its value (which may be all an agent typed).
	if r := strings.Index(line, "[ref="); r >= 0 {
		if e := strings.IndexByte(line[r:], ']'); e >= 0 {
			line = line[:r+e+1]
		}
	}
	return clip.Short(strings.TrimSuffix(line, ":"))
}

// setFull sets the Snapshot section for a page the agent has not seen yet
// (after navigate, or an action that replaced the page), as the snapshot
// mode says: the whole page (full), the whole page up to inlineBudget
// (inline), nothing (none), or (outline) the whole page when it is small,
// else its outline and the ways to see more. browser_navigate's find
// argument replaces the outline with the elements that match.
func (c *tabCall) setFull(text string) {
	switch c.snapshotMode() {
	case modeNone:
		return
	case modeFull:
		c.setSnapshotFile(text)
		return
	case modeInline:
		if cut, truncated := snapshot.Truncate(text, inlineBudget); truncated {
			c.resp.SetSnapshot(fence("yaml", cut) + fmt.Sprintf("\n- Snapshot cut at %d characters: browser_snapshot with query, interactive or maxChars shows the rest", inlineBudget))
			return
		}
		c.resp.SetSnapshot(fence("yaml", text))
		return
	}
	size := utf8.RuneCountInString(text)
	find := c.args.String("find", "")
	seen := c.tab.SeenURL(c.tab.URL())
	if size <= smallPage && find == "" {
		c.resp.SetSnapshot(fence("yaml", text))
		return
	}
	tree, err := snapshot.Parse(text)
	if err != nil {
		c.setFullInline(text)
		return
	}
	if find != "" {
		res := snapshot.Search(tree, snapshot.TextMatcher(find), snapshot.SearchOptions{Max: navFindMatches})
		if res.Total == 0 {
			c.resp.SetSnapshot(fmt.Sprintf("- No element matches %s on this page (%d characters): try fewer words, browser_find with a regex, or browser_snapshot", clip.Quote(find), size))
			return
		}
		c.resp.SetSnapshot(fmt.Sprintf("- Matches (page: %d chars):\n%s", size, fence("yaml", snapshot.RenderMatches(res, 2000))))
		return
	}
	if c.back && seen {
		// Back on a page the agent was shown: no outline again.
		c.resp.SetSnapshot(fmt.Sprintf("- Back on a page seen before (%d chars; its refs are new): browser_find text=… or browser_snapshot", size))
		return
	}
	budget := landmarksBudget
	if c.snapshot == snapDiff {
		budget = actionLandmarksBudget
	}
	regions := snapshot.Landmarks(tree, budget)
	if regions == "" {
		regions = "no landmark regions"
	}
	out := fmt.Sprintf("- Outline (%d chars): %s", size, regions)
	if !c.tab.Told("outline more") {
		out += "\n" + morePointer
	}
	c.resp.SetSnapshot(out)
}

// morePointer tells an agent reading its first outline in a tab how to get
// more, cheapest first (the tools' descriptions say it too).
const morePointer = "- More: browser_find text=…; browser_snapshot target=<ref>, outline=true or all"

func (c *tabCall) setFullInline(text string) {
	cut, _ := snapshot.Truncate(text, inlineBudget)
	c.resp.SetSnapshot(fence("yaml", cut))
}
