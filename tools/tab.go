package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// tabCall is the state of one call of a tool that works on the current tab.
type tabCall struct {
	ctx  context.Context
	env  *Env
	args Args
	sess *session.Session
	gen  *session.Generation
	tab  *page.Tab
	resp *Response

	// snapshot says what the response carries in its Snapshot section.
	snapshot snapshotKind
	// before is the tab's snapshot before the action, for the diff.
	before *page.Snapshot
	// navBefore is the tab's navigation count before the action.
	navBefore int
	// typed is the text an action typed into the focused field, if any:
	// when the page changed nothing else, its snapshot is skipped.
	typed *string
	// back: browser_navigate_back, whose page the agent may have seen.
	back bool
	// rec gathers the call's recorded step (record.go); nil when the tool
	// is not recorded or no Recorder is on.
	rec *stepRec
}

type snapshotKind int

const (
	snapNone snapshotKind = iota
	snapFull              // the whole page (navigate)
	snapDiff              // what the action changed
)

// tabOpts describe how a tab tool behaves around its action.
type tabOpts struct {
	// clearsModal is the modal kind the tool handles ("dialog", "filechooser").
	clearsModal page.ModalKind
	// snapshot is what the Snapshot section carries after the action.
	snapshot snapshotKind
	// noPage leaves out the Page section.
	noPage bool
	// leavesModal: the tool leaves the page, dismissing its dialogs
	// (browser_navigate), so a modal state does not refuse it.
	leavesModal bool
}

// tabTool wraps a handler that needs the current tab of a live browser.
func tabTool(name string, o tabOpts, fn func(c *tabCall) error) func(ctx context.Context, env *Env, args Args) *Response {
	return func(ctx context.Context, env *Env, args Args) *Response {
		resp := &Response{}
		sess, err := env.Session(ctx)
		if err != nil {
			return resp.Error("%v", err)
		}
		err = sess.Do(ctx, func(ctx context.Context, g *session.Generation) error {
			tab, err := g.CurrentTab(ctx)
			if err != nil {
				return err
			}
			c := &tabCall{ctx: ctx, env: env, args: args, sess: sess, gen: g, tab: tab, resp: resp, snapshot: o.snapshot}
			modals := tab.Modals()
			if o.clearsModal != "" {
				modals = tab.WaitModal(ctx)
			}
			if len(modals) > 0 && !o.leavesModal && (o.clearsModal == "" || modals[0].Kind != o.clearsModal) {
				resp.Error("Tool %q does not handle the modal state.", name)
				c.addModal()
				return nil
			}
			if len(modals) == 0 && o.clearsModal != "" {
				what := map[page.ModalKind]string{"dialog": "dialog", "filechooser": "file chooser"}[o.clearsModal]
				resp.Error("No %s is open: %s handles the modal state a page action opened.", what, name)
				return nil
			}
			if c.snapshot == snapDiff {
				c.before = tab.LastSnapshot()
				c.navBefore = tab.LastNavSeq()
			}
			c.startRecording(name)
			if err := fn(c); err != nil {
				if g.Lost() || errors.Is(err, session.ErrBrowserGone) {
					return fmt.Errorf("%w: %v", session.ErrBrowserGone, err)
				}
				resp.Error("%s", friendlyError(err))
			}
			c.finish(o)
			c.finishRecording(name)
			return nil
		})
		if err != nil {
			return sessionError(resp, err)
		}
		return resp
	}
}

// finish adds the Page, Modal state, Snapshot and Events sections.
func (c *tabCall) finish(o tabOpts) {
	tab := c.tab
	if tab.Closed() {
		// The action closed the tab; report on whatever is current now.
		if t, err := c.gen.CurrentTab(c.ctx); err == nil {
			tab = t
			c.tab = t
		}
	}
	if len(c.gen.Tabs()) > 1 {
		c.resp.SetTabs(tabLines(c.ctx, c.gen))
	}
	// The Page section is read after the snapshot: the snapshot's own
	// read of the page brings the title along.
	if !o.noPage {
		defer func() {
			// After an action, the Page section only when something in it
			// changed (URL, title, console counts, crash); upstream's
			// modes (full, none) keep it always.
			lines := pageLines(c.ctx, tab)
			mode := c.snapshotMode()
			if c.snapshot != snapDiff || mode == modeFull || mode == modeNone || !slices.Equal(lines, tab.ShownPage()) {
				c.resp.SetPage(lines)
			}
			tab.SetShownPage(lines)
		}()
	}
	if c.addModal() {
		// A page blocked on a dialog cannot be snapshotted.
		c.snapshot = snapNone
	}
	if !c.resp.Failed() || c.snapshot == snapFull {
		switch c.snapshot {
		case snapFull:
			switch snap, err := tab.AISnapshot(c.ctx, page.SnapshotOptions{}); {
			case err == nil:
				c.setFull(snap.Text)
			case errors.Is(err, page.ErrCrashed) && !c.resp.Failed():
				// The page crashed just after the action: that is its outcome.
				c.resp.Error("%s", friendlyError(err))
			default:
				c.snapshotUnavailable(err)
			}
		case snapDiff:
			c.addDiff()
		}
	}
	for _, e := range tab.TakeEvents() {
		c.resp.AddEvent("- " + e.Text)
	}
}

// snapshotUnavailable says why the snapshot of a response could not be
// taken. A dialog of the tab's that opened after finish looked for one (an
// alert from a load handler, just after the load event; the next alert of
// a loop, just after one was answered) goes into the Modal state section,
// which says what blocks the page and how to handle it.
func (c *tabCall) snapshotUnavailable(err error) {
	if errors.Is(err, page.ErrModal) && c.addModal() {
		return
	}
	c.resp.AddEvent("- Snapshot unavailable: " + friendlyError(err))
}

func (c *tabCall) addModal() bool {
	modals := c.tab.Modals()
	for _, m := range modals {
		c.resp.AddModal(fmt.Sprintf("- [%s]: can be handled by %s", m.Description, m.ClearedBy))
	}
	return len(modals) > 0
}

func pageLines(ctx context.Context, t *page.Tab) []string {
	lines := []string{"- Page URL: " + t.URL()}
	// An empty title is left out, as upstream does.
	if title, ok := t.Title(ctx); ok && title != "" {
		lines = append(lines, "- Page Title: "+title)
	}
	if t.Crashed() {
		lines = append(lines, "- Page status: crashed")
	}
	lines = append(lines, webmcpPageLines(t.WebMCPList())...)
	if errs, warns := consoleCounts(t); errs+warns > 0 {
		lines = append(lines, fmt.Sprintf("- Console: %d errors, %d warnings", errs, warns))
	}
	return lines
}

func consoleCounts(t *page.Tab) (errs, warns int) {
	// The same levels browser_console_messages lists (an "assert" is an
	// error there too).
	for _, e := range t.Console(true) {
		switch severity(e.Type) {
		case 0:
			errs++
		case 1:
			warns++
		}
	}
	return
}

func tabLines(ctx context.Context, g *session.Generation) []string {
	cur := g.Selected()
	var lines []string
	for i, t := range g.Tabs() {
		title, _ := t.Title(ctx)
		mark := ""
		if t == cur {
			mark = "(current) "
		}
		extra := ""
		if t.Crashed() {
			extra = " [crashed]"
		}
		lines = append(lines, fmt.Sprintf("- %d: %s[%s](%s)%s", i, mark, title, t.URL(), extra))
	}
	return lines
}

// locate turns a target (a ref from the last snapshot, or a selector) into
// an element of the current tab, failing fast when it matches nothing.
func (c *tabCall) locate(target string) (*page.Element, error) {
	return c.locateBy(c.tab.Locate, target)
}

// locateToAct is locate for the element an action acts on: a ref of the
// last snapshot on a page unchanged since is not looked up first
// (page.Tab.LocateToAct).
func (c *tabCall) locateToAct(target string) (*page.Element, error) {
	return c.locateBy(c.tab.LocateToAct, target)
}

// locateBy finds target with find and records the element found.
func (c *tabCall) locateBy(find func(context.Context, string) (*page.Element, error), target string) (*page.Element, error) {
	el, err := find(c.ctx, target)
	if err == nil {
		c.recordTarget(target, el)
	}
	return el, err
}

// describe names a target for messages: the agent's description if given.
func (c *tabCall) describe(target string) string {
	if el := c.args.String("element", ""); el != "" {
		return fmt.Sprintf("%s (%s)", clip.Short(el), clip.Short(target))
	}
	return clip.Short(target)
}

// friendlyError turns an error of a browser call into one line that says
// what to do next. Playwright's messages quote selectors, URLs and text the
// agent passed: a line past maxErrorLine is cut (clip.Short's form).
func friendlyError(err error) string {
	line := clip.Words(friendlyLine(err))
	if len(line) > maxErrorLine {
		line = clip.Prefix(line, maxErrorLine) + fmt.Sprintf("… (%d chars)", utf8.RuneCountInString(line))
	}
	return line
}

// maxErrorLine bounds friendlyError's line.
const maxErrorLine = 600

func friendlyLine(err error) string {
	var te *page.TimeoutError
	var re *page.RefError
	var be *page.BlockedError
	switch {
	case errors.As(err, &re):
		return re.Msg
	case errors.As(err, &be):
		return be.Error()
	case errors.Is(err, page.ErrModal):
		return "a dialog or file chooser opened and blocks the page: handle it with browser_handle_dialog or browser_file_upload"
	case errors.Is(err, page.ErrNotResponding):
		return clip.FirstLine(err.Error()) + ": browser_navigate to another page stops its scripts, or try again later"
	case errors.Is(err, page.ErrCrashed):
		return clip.FirstLine(err.Error()) + ": browser_navigate opens a new page in this tab (the crashed page's state is lost)"
	case errors.Is(err, page.ErrSelfNavigating):
		return clip.FirstLine(err.Error()) + ": browser_navigate to another page leaves it"
	case errors.As(err, &te):
		line := clip.FirstLine(strings.TrimPrefix(err.Error(), "playwright: "))
		switch {
		case te.Msg == "":
			// The caller's deadline, not Playwright's: no element to blame.
			return line + " — the page did not answer in time"
		case te.Action:
			return line + " — the element may be hidden, disabled, covered or gone; take a new snapshot"
		}
		return line
	}
	return clip.FirstLine(strings.TrimPrefix(err.Error(), "playwright: "))
}
