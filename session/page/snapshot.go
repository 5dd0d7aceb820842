package page

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/snapshot"
)

// snapshotTimeout bounds one snapshot: pages with frames that never load or
// huge DOMs return what is there instead of hanging.
const snapshotTimeout = 10 * time.Second

// frameBudget is the first snapshot budget on a page with child frames that
// have not committed a document: Playwright descends into every frame with
// the snapshot's one timeout, so the budget is what such a frame costs.
// When the main frame alone needs longer, the next attempt gets four times
// as much.
const frameBudget = 250 * time.Millisecond

// busyBudget is what a snapshot still gets after the page missed its
// liveness probe (probeTimeout): together at most ~5 s before "not
// responding".
const busyBudget = 2500 * time.Millisecond

// Snapshot is a whole-page AI snapshot of a tab: the text the agent saw,
// parsed once (without focus marks, which move with nearly every action and
// are noise in a diff).
type Snapshot struct {
	// Text is Playwright's AI snapshot text.
	Text string
	// FramesNotLoaded counts the child frames whose document had not
	// arrived: they show as an iframe without content.
	FramesNotLoaded int
	// FramesBusy counts the child frames of another site that did not
	// answer their watch's last read (their own script holds them): the
	// walk did not wait for them, so they may show without content.
	FramesBusy int

	doc  int  // the tab's DocSeq when it was taken
	tab  *Tab // the tab it was taken of
	once sync.Once
	tree *snapshot.Tree
	err  error
}

// Tree is the snapshot parsed, with " [active]" marks dropped.
func (s *Snapshot) Tree() (*snapshot.Tree, error) {
	s.once.Do(func() {
		s.tree, s.err = snapshot.Parse(strings.ReplaceAll(s.Text, " [active]", ""))
	})
	return s.tree, s.err
}

// SnapshotOptions shape an AI snapshot.
type SnapshotOptions struct {
	// Depth limits the tree's depth; if zero, no limit.
	Depth int
	// Boxes adds each element's bounding box.
	Boxes bool
}

func (o SnapshotOptions) page(ctx context.Context) playwright.PageAriaSnapshotOptions {
	return o.pageWithin(ctx, snapshotTimeout)
}

// pageWithin is page with the timeout bounded by budget too.
func (o SnapshotOptions) pageWithin(ctx context.Context, budget time.Duration) playwright.PageAriaSnapshotOptions {
	timeout := min(snapshotBudget(ctx), float64(budget.Milliseconds()))
	opts := playwright.PageAriaSnapshotOptions{Mode: playwright.AriaSnapshotModeAi, Timeout: &timeout}
	if o.Depth > 0 {
		opts.Depth = playwright.Int(o.Depth)
	}
	if o.Boxes {
		opts.Boxes = playwright.Bool(true)
	}
	return opts
}

func snapshotBudget(ctx context.Context) float64 {
	timeout := snapshotTimeout
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < timeout {
			timeout = max(left, 100*time.Millisecond)
		}
	}
	return float64(timeout.Milliseconds())
}

// AISnapshot takes Playwright's AI snapshot of the tab. A whole-page
// snapshot (no Depth, no Boxes) becomes the tab's last snapshot, the base of
// the next diff, and its refs are stored in the session's ref cache under
// the page's target.
//
// It does not wait for child frames whose document never arrived (they are
// counted in FramesNotLoaded), and ends with ErrNotResponding when the
// page's main thread does not answer a trivial call first. A whole-page
// snapshot of a page the watch (watch.go) finds unchanged since the last
// one is that one.
func (t *Tab) AISnapshot(ctx context.Context, o SnapshotOptions) (*Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, snapshotTimeout+time.Second)
	defer cancel()
	whole := o.Depth == 0 && !o.Boxes
	if whole {
		// Where the last snapshot can take in a part of the page, the
		// read that finds the part comes first (splice.go).
		if ask := t.partAsk(); ask == nil || t.toldNoPart(ask.Since) {
			if base := t.toldChange(); base != 0 {
				return t.snapshotAt(ctx, o, base, "the watch told of a change")
			}
		}
		if base := t.walkDue(); base != 0 {
			return t.snapshotAt(ctx, o, base, "the last snapshot does not stand")
		}
	}
	// A trivial call first: a page busy with its own script does not
	// answer it, and gets ErrNotResponding in probeTimeout instead of the
	// snapshot's timeout. Probing beside the snapshot instead would blame
	// the page for the snapshot's own work on a big DOM.
	//
	// A missed probe is not yet a verdict: on a starved machine a live page
	// can miss it too, so the snapshot still gets busyBudget, and only when
	// that times out as well is the page declared not responding.
	var r *watchRead
	var settled, missed bool
	part := 0
	if whole {
		r, settled, missed = t.watchOrProbe(ctx)
	} else {
		// The read stands in for the probe.
		var err error
		if part, err = t.partBase(ctx); err != nil {
			missed = t.missedRead(ctx, err)
		}
	}
	if r != nil {
		t.mu.Lock()
		t.busy = false
		s := t.snap
		switch {
		case t.showsLocked(r):
			// Nothing changed since the last snapshot: it is the answer.
			t.snapBase, t.refsBase = r.NewBase, r.NewBase
			t.mu.Unlock()
			return s, nil
		case s == nil || r.doc != t.docNav:
		case settled && s.stands() && r.ClickedOnly(t.snapBase):
			// An action that only focused what it clicked: its diff
			// leaves focus out, but the snapshot's focus mark is now
			// off, so it is not served as a page snapshot again.
			t.snapBase, t.refsBase = r.NewBase, r.NewBase
			t.snapMarksOff = r.Focus || t.snapMarksOff
			t.mu.Unlock()
			return s, nil
		}
		t.mu.Unlock()
		if s := t.splice(ctx, r); s != nil {
			return s, nil
		}
	}
	text, pending, err := t.walk(ctx, o, missed)
	if err != nil {
		return nil, err
	}
	if missed {
		t.mu.Lock()
		t.busy = false // it answered after all
		t.mu.Unlock()
	}
	base := part
	if r != nil && r.doc == t.DocSeq() {
		base = r.NewBase
	}
	return t.keepSnapshot(ctx, text, pending, whole, base, false), nil
}

// snapshotAt walks the page after base, the watch's newest base, without
// reading the watch first: the watch told of a change after the last read
// (toldChange), or the last snapshot does not stand whatever the page did
// (walkDue). Either way the walk is due, and a base the watch marked before
// it stands for it: a change after the base that the walk missed is
// reported by the next read against it. The title is the one the watch
// told, if it told since base. A read goes beside the walk, marking
// nothing: it lets the watch tell of the next change, and should the page
// not answer it either, the walk gets busyBudget more before the page is
// declared not responding, as after a missed probe. The answer does not
// wait for it.
func (t *Tab) snapshotAt(ctx context.Context, o SnapshotOptions, base int, why string) (*Snapshot, error) {
	start := time.Now()
	wctx, stopWalk := context.WithCancel(ctx)
	defer stopWalk()
	var hung atomic.Bool
	t.c.Go(func() {
		rctx, cancel := context.WithTimeout(context.Background(), watchTimeout)
		defer cancel()
		_, err := t.readWatch(rctx, false, false, nil)
		var te *TimeoutError
		if err == nil || !errors.As(err, &te) || wctx.Err() != nil || len(t.Modals()) > 0 {
			return
		}
		select {
		case <-time.After(busyBudget):
			hung.Store(true)
			stopWalk()
		case <-wctx.Done():
		}
	})
	w0 := time.Now()
	text, pending, err := t.walk(wctx, o, false)
	walkMS := time.Since(w0).Milliseconds()
	if err != nil {
		if hung.Load() {
			t.markBusy()
			return nil, fmt.Errorf("snapshot: %w", ErrNotResponding)
		}
		return nil, err
	}
	t.noteToldTitle(base, start)
	t.c.env.Log.Debug().Int("tab", t.ID).Str("why", why).Int64("walk_ms", walkMS).Int64("ms", time.Since(start).Milliseconds()).Msg("snapshot: walked without a read first")
	return t.keepSnapshot(ctx, text, pending, true, base, false), nil
}

// frameGaps counts the child frames a walk may show without content.
type frameGaps struct {
	notLoaded int // their document has not arrived
	busy      int // they did not answer (framesBusy)
}

// frameGaps counts the tab's child frames a walk may show without content
// now: a walk gives them the short frame budget, and no part walk (which
// would wait for them within its own) is asked for.
func (t *Tab) frameGaps() frameGaps {
	return frameGaps{notLoaded: t.framesNotLoaded(), busy: t.framesBusy()}
}

// walk takes Playwright's AI snapshot of the page (bounded as AISnapshot
// says): its text, and the child frames it may show without content.
func (t *Tab) walk(ctx context.Context, o SnapshotOptions, missed bool) (string, frameGaps, error) {
	pending := t.frameGaps()
	budget, limit := snapshotTimeout, snapshotTimeout
	switch {
	case missed:
		budget, limit = busyBudget, busyBudget
	case pending != frameGaps{}:
		budget = frameBudget
	}
	for {
		opts := o.pageWithin(ctx, budget)
		text, err := call(ctx, t.c, "snapshot", stopOn{modal: t, busyOK: true}, func() (string, error) { return t.p.AriaSnapshot(opts) })
		var te *TimeoutError
		if err == nil {
			return text, pending, nil
		}
		if missed && errors.As(err, &te) && ctx.Err() == nil {
			return "", frameGaps{}, fmt.Errorf("snapshot: %w", ErrNotResponding)
		}
		if budget >= limit && errors.As(err, &te) && ctx.Err() == nil {
			// The page answered the probe but its snapshot did not finish
			// (a DOM of 200,000 elements): the renderer is still at it,
			// so the next call probes first (Busy), and a navigation
			// stops it.
			t.markBusy()
			return "", frameGaps{}, fmt.Errorf("snapshot: %w", &TimeoutError{Op: "snapshot", Err: err,
				Msg: fmt.Sprintf("the snapshot did not finish within %s: the page is too large or too busy (browser_navigate stops its work)", budget.Round(time.Second))})
		}
		if budget >= limit || !errors.As(err, &te) || ctx.Err() != nil {
			return "", frameGaps{}, err
		}
		budget = min(4*budget, limit)
	}
}

// keepSnapshot makes text the tab's snapshot; a whole-page one becomes its
// last snapshot, after watch base base (0: none), and its refs are stored.
// spliced says Playwright's last walk was of a part of it (splice.go): its
// aria-ref map is the part's.
func (t *Tab) keepSnapshot(ctx context.Context, text string, pending frameGaps, whole bool, base int, spliced bool) *Snapshot {
	s := &Snapshot{Text: text, FramesNotLoaded: pending.notLoaded, FramesBusy: pending.busy, tab: t}
	t.mu.Lock()
	s.doc = t.docNav
	if !whole {
		t.mu.Unlock()
		t.tookPartialAI(base)
		return s
	}
	t.snap = s
	t.snapBase, t.refsBase, t.snapMarksOff = base, base, false
	t.refs.ownAI, t.refs.partialAI = true, spliced
	t.refs.aiSeq, t.refs.sels = t.c.refs.next(), nil
	t.mu.Unlock()
	if tree, err := s.Tree(); err == nil {
		t.storeRefs(ctx, func(e *snapshot.RefCacheEntry) { e.AI = snapshot.AIRefs(tree) })
	}
	return s
}

// stands reports whether s can stand for the page as long as the watch
// finds nothing changed since it: be served again, and take in parts of the
// page (partAsk). Not when its walk did not wait for a busy frame: it may
// show a frame without content that was there, and when that frame has
// moved into the page's own renderer (a frame of another site navigated to
// the page's origin), the main watch, which reads it from then on, sees
// nothing change after its new document.
func (s *Snapshot) stands() bool { return s.FramesBusy == 0 }

// LastSnapshot is the last whole-page AI snapshot taken of the tab, or nil.
func (t *Tab) LastSnapshot() *Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.snap
}

// hasRef reports whether the tab's last AI snapshot holds ref.
func (t *Tab) hasRef(ref string) bool {
	s := t.LastSnapshot()
	return s != nil && strings.Contains(s.Text, "[ref="+ref+"]")
}

// axTree fetches Chromium's full accessibility tree of the tab's main frame.
func (t *Tab) axTree(ctx context.Context) ([]*accessibility.Node, error) {
	raw, err := t.CDP(ctx, "Accessibility.getFullAXTree", nil)
	if err != nil {
		return nil, fmt.Errorf("read the accessibility tree: %w", err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var res accessibility.GetFullAXTreeResult
	if err := jsonv2.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("decode the accessibility tree: %w", err)
	}
	return res.Nodes, nil
}

// ARIASnapshot builds the ARIA tree of the tab (refs ax12, kept from the
// previous one where the node is the same) and keeps it for ref resolution.
func (t *Tab) ARIASnapshot(ctx context.Context) (*snapshot.Tree, error) {
	nodes, err := t.axTree(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	prev := t.refs.aria
	t.mu.Unlock()
	tree := snapshot.FromAXTree(nodes, snapshot.AXOptions{Previous: prev})
	t.mu.Lock()
	t.refs.aria = tree
	t.refs.ariaSeq = t.c.refs.next()
	t.mu.Unlock()
	t.storeRefs(ctx, func(e *snapshot.RefCacheEntry) { e.ARIA = tree })
	return tree, nil
}

// RoleSnapshot builds the Role tree of the tab (refs r12) with o (Previous
// is filled in) and keeps it for ref resolution.
func (t *Tab) RoleSnapshot(ctx context.Context, o snapshot.RoleOptions) (*snapshot.Tree, error) {
	nodes, err := t.axTree(ctx)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	o.Previous = t.refs.role
	t.mu.Unlock()
	tree := snapshot.RoleTree(nodes, o)
	t.mu.Lock()
	t.refs.role = tree
	t.refs.roleDoc = t.docNav
	t.refs.roleSeq = t.c.refs.next()
	t.mu.Unlock()
	t.storeRefs(ctx, func(e *snapshot.RefCacheEntry) { e.Role = tree })
	return tree, nil
}
