package tools

import (
	"fmt"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// Budgets for the Snapshot section of action responses.
const (
	// diffBudget bounds a diff after an action.
	diffBudget = 6000
	// fullBudget bounds a whole-page snapshot inlined in an action response
	// (navigate, or an action that replaced the page); browser_snapshot has
	// no such bound unless asked.
	fullBudget = 40000
	// diffCollapse: an added list of more than 2×diffCollapse items shows
	// its first diffCollapse, then one line naming the ref that holds the rest.
	diffCollapse = 5
)

// addDiff sets the Snapshot section after an action: what the action
// changed, or the new page when it navigated.
func (c *tabCall) addDiff() {
	snap, err := c.tab.AISnapshot(c.ctx, session.SnapshotOptions{})
	if err != nil {
		c.resp.AddEvent("- Snapshot unavailable: " + friendlyError(err))
		return
	}
	if c.before == nil || c.tab.LastNavSeq() != c.navBefore {
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
	d := snapshot.DiffWith(prev, cur, snapshot.DiffOptions{Budget: diffBudget, Collapse: diffCollapse, RootNewOnly: true})
	if d.Unchanged {
		c.resp.SetSnapshot("- No change in the page snapshot")
		return
	}
	c.resp.SetSnapshot(fmt.Sprintf("- Changes (+ added, - removed; full page: browser_snapshot):\n%s", fence("diff", d.Text)))
}

// setFull inlines the whole snapshot, bounded.
func (c *tabCall) setFull(text string) {
	if cut, truncated := snapshot.Truncate(text, fullBudget); truncated {
		c.resp.SetSnapshot(fence("yaml", cut) + fmt.Sprintf("\n- Snapshot cut at %d characters: browser_snapshot with query, interactive or maxChars shows the rest", fullBudget))
		return
	}
	c.resp.SetSnapshot(fence("yaml", text))
}
