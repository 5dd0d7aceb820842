// The tab's side of the watch (session/watch): its world, its reads and
// what they let a snapshot or an action skip.

package page

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/watch"
)

// watchRead is one read of the watch and the tab's navigation count when
// it was made (nav), and its count of navigations to a new document (doc):
// the watch's bases hold across a same-document navigation (pushState, a
// fragment), whose URL change the watch reports where a walk can show it.
type watchRead struct {
	*watch.Read
	nav, doc int
}

// watchTimeout bounds a read: the page answered a probe a moment ago, or
// it is busy (probeTimeout then).
const watchTimeout = probeTimeout

// readWatch reads (and, with mark, re-bases) the watch of the tab's main
// frame. afterAction lets the tasks the page queued run first (a zero
// timer), so updates an action's handlers deferred that way are seen; the
// snapshot this replaces was never later than that either.
func (t *Tab) readWatch(ctx context.Context, mark, afterAction bool, part *watch.Part) (*watchRead, error) {
	if !t.watchable() {
		return nil, errWatchOff
	}
	ctx, cancel := context.WithTimeout(ctx, watchTimeout)
	defer cancel()
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	// A marking read reads the out-of-process frames' watches beside it
	// (framewatch.go).
	var frames *frameReads
	if mark {
		frames = t.readFrames(afterAction)
		if frames != nil && part != nil {
			// A part walk leaves out the sealed frames that stood: the
			// main read waits for theirs.
			p := *part
			p.Stood = t.framesStood(ctx, frames)
			part = &p
		}
	}
	// A world that went with its document is made anew, once (lost);
	// evalWatch sends a world without the watch the whole script.
	for lost := false; ; {
		t.mu.Lock()
		nav, doc := t.lastNav, t.docNav
		t.mu.Unlock()
		cid, err := t.watchContext(ctx)
		if err != nil {
			return nil, err
		}
		// A world the whole watch ran in keeps it: a read there sends
		// only its name.
		t.mu.Lock()
		installed := t.watchInstalled == cid
		t.mu.Unlock()
		r, err := evalWatch(func(params map[string]any) (any, error) {
			return call(ctx, t.c, "read the page's state", stopOn{modal: t, busyOK: true}, func() (any, error) {
				return sendCDP(ctx, s, 0, "Runtime.evaluate", params)
			})
		}, cid, installed, mark, afterAction, part)
		if err != nil {
			// The world went with its document: make a new one, once.
			var pe *PageError
			if !lost && errors.As(err, &pe) {
				lost = true
				t.forgetWatchContext(cid)
				continue
			}
			return nil, err
		}
		t.mu.Lock()
		if t.watchCtx == cid {
			t.watchInstalled = cid
		}
		t.mu.Unlock()
		if frames != nil && r.Sealed > 0 {
			t.sealedStand(ctx, r, frames)
		}
		if mark {
			t.markRead(cid, r)
		}
		return &watchRead{Read: r, nav: nav, doc: doc}, nil
	}
}

// evalWatch runs the watch in world cid through eval (a Runtime.evaluate
// of params): by its name where the whole script ran in that world before
// (installed), else, or when the world turns out to hold no watch, the
// whole script. eval's errors come back as they are. The page's watch and
// the frames' (framewatch.go) are read through it.
func evalWatch(eval func(params map[string]any) (any, error), cid int, installed, mark, afterAction bool, part *watch.Part) (*watch.Read, error) {
	for whole := !installed; ; whole = true {
		expr := watch.Call(mark, afterAction, part)
		if whole {
			expr = watch.Expression(mark, afterAction, part)
		}
		res, err := eval(map[string]any{"expression": expr, "contextId": cid, "returnByValue": true, "awaitPromise": true})
		if err != nil {
			return nil, err
		}
		r, err := watch.Decode(res)
		if errors.Is(err, watch.ErrNotInstalled) && !whole {
			continue
		}
		return r, err
	}
}

var errWatchOff = errors.New("the page is driven by other means too; no watch")

// watchable reports whether the watch can be trusted on this tab: no CDP
// proxy client can drive the page behind its back.
func (t *Tab) watchable() bool {
	return t.c.env.Watch
}

// watchContext is the execution context of the watch's world in the main
// frame's current document, created when the document is new (a
// same-document navigation keeps it: a router's pushState or a fragment).
func (t *Tab) watchContext(ctx context.Context) (int, error) {
	for {
		t.mu.Lock()
		cid, at, doc := t.watchCtx, t.watchDoc, t.docNav
		opening := t.watchOpening
		if cid != 0 && at == doc {
			t.mu.Unlock()
			return cid, nil
		}
		if opening != nil && t.watchOpeningDoc == doc {
			// The world of this document is being made (openWatchWorld
			// at its commit): wait for that rather than make another.
			t.mu.Unlock()
			select {
			case <-opening:
				continue
			case <-ctx.Done():
				return 0, ctxErr("open the watch's world", ctx.Err())
			}
		}
		done := make(chan struct{})
		t.watchOpening, t.watchOpeningDoc = done, doc
		t.mu.Unlock()
		cid, err := t.openWatchContext(ctx, doc)
		t.mu.Lock()
		if t.watchOpening == done {
			t.watchOpening = nil
		}
		t.mu.Unlock()
		close(done)
		return cid, err
	}
}

// openWatchContext makes the watch's world in the main frame's document
// doc (the tab's docNav) and adds the binding the watch tells through.
func (t *Tab) openWatchContext(ctx context.Context, doc int) (int, error) {
	frame, err := t.TargetID(ctx) // a page's main frame id is its target id
	if err != nil {
		return 0, err
	}
	s, err := t.cdpSession(ctx)
	if err != nil {
		return 0, err
	}
	res, err := call(ctx, t.c, "open the watch's world", stopOn{modal: t, busyOK: true}, func() (any, error) {
		return sendCDP(ctx, s, 0, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": watch.World})
	})
	if err != nil {
		return 0, err
	}
	id, _ := res.(map[string]any)["executionContextId"].(float64)
	if id == 0 {
		return 0, fmt.Errorf("open the watch's world: no context in %v", res)
	}
	// The binding the watch tells of changes through, in this world only,
	// is not waited for: the watch looks for it at each change, and
	// without it is read as before.
	t.c.Go(func() {
		bctx, cancel := context.WithTimeout(context.Background(), cdpAttachTimeout)
		defer cancel()
		if _, err := call(bctx, t.c, "add the watch's binding", stopOn{}, func() (any, error) {
			return sendCDP(bctx, s, 0, "Runtime.addBinding", map[string]any{"name": watch.Binding, "executionContextId": int(id)})
		}); err != nil {
			t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("watch: no binding; snapshots read the page first")
		}
	})
	t.mu.Lock()
	if t.docNav == doc {
		t.watchCtx, t.watchDoc = int(id), doc
	}
	t.mu.Unlock()
	return int(id), nil
}

// openWatchWorld makes the watch's world of a document that just
// committed, in the background, while the page loads: the first read after
// a navigation (the navigate's own) then finds it.
func (t *Tab) openWatchWorld() {
	if !t.watchable() {
		return
	}
	t.c.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cdpAttachTimeout)
		defer cancel()
		_, _ = t.watchContext(ctx)
	})
}

func (t *Tab) forgetWatchContext(cid int) {
	t.mu.Lock()
	if t.watchCtx == cid {
		t.watchCtx = 0
	}
	t.mu.Unlock()
}

// invalidateWatch drops the base of the tab's last snapshot: the page was
// changed in a way the watch may not see (script, viewport, emulation),
// so the next snapshot is taken afresh.
func (t *Tab) invalidateWatch() {
	t.mu.Lock()
	t.snapBase, t.refsBase = 0, 0
	t.settled = nil
	t.mu.Unlock()
}

// settledRead is the watch read Settle made at the end of an action, kept
// for the snapshot that follows while nothing else happened.
type settledRead struct {
	r   *watchRead
	seq int
	at  time.Time
}

// settledMaxAge bounds how long a settled read stands in for a new one.
const settledMaxAge = time.Second

// settledLocked returns the read Settle left if it still describes the page
// (no navigation, no request, no change the watch told of since, and
// recent), else nil. t.mu is held.
func (t *Tab) settledLocked() *watchRead {
	s := t.settled
	if s == nil || s.seq != t.seq || s.r.nav != t.lastNav || time.Since(s.at) > settledMaxAge {
		return nil
	}
	if t.toldNew {
		return nil // the watch told of a change since
	}
	return s.r
}

// takeSettled returns settledLocked's read and forgets it.
func (t *Tab) takeSettled() *watchRead {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.settledLocked()
	t.settled = nil
	return r
}

// OnlyTyped reports whether the action just settled changed nothing on the
// page but the focused field's value, which is now text; the snapshot
// after it can be skipped. The last snapshot stays the base of diffs but,
// lacking the value, is not served as a page snapshot again.
func (t *Tab) OnlyTyped(text string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.settledLocked()
	if r == nil || !r.OnlyTyped(t.snapBase, text) {
		return false
	}
	t.settled = nil
	t.snapBase, t.refsBase, t.snapMarksOff = r.NewBase, r.NewBase, true
	return true
}

// watchOrProbe reads the watch before a whole-page snapshot (the read Settle
// left, or a new one, marking a base) in place of the liveness probe:
// missed is true when the page did not answer in time. Without a watch
// it probes.
func (t *Tab) watchOrProbe(ctx context.Context) (r *watchRead, settled, missed bool) {
	if r := t.takeSettled(); r != nil {
		return r, true, false
	}
	r, err := t.readWatch(ctx, true, false, t.partAsk())
	if err == nil {
		// The snapshot that follows is the page's latest state; so is
		// this title.
		t.mu.Lock()
		t.noteTitleLocked(r.Title)
		t.mu.Unlock()
		return r, false, false
	}
	return nil, false, t.missedRead(ctx, err)
}

// missedRead reports whether the page missed a read of the watch that
// failed with err, standing in for the probe: a read that ran out of time
// (no dialog open) marks the page busy; any other failure is told by a
// probe.
func (t *Tab) missedRead(ctx context.Context, err error) bool {
	var te *TimeoutError
	if errors.As(err, &te) && ctx.Err() == nil && len(t.Modals()) == 0 {
		t.markBusy()
		return true
	}
	return !t.alive(ctx)
}

// settleRead reads the watch at the end of an action, bounded like the
// round trip it replaces.
func (t *Tab) settleRead(ctx context.Context) (*watchRead, error) {
	ctx, cancel := context.WithTimeout(ctx, settleReadTimeout)
	defer cancel()
	return t.readWatch(ctx, true, true, t.partAsk())
}

// settleReadTimeout bounds the read at the end of an action.
const settleReadTimeout = 400 * time.Millisecond

// keepSettled keeps r for the snapshot that follows the action, and its
// title for the response's Page section.
func (t *Tab) keepSettled(r *watchRead) {
	t.mu.Lock()
	t.settled = &settledRead{r: r, seq: t.seq, at: time.Now()}
	t.noteTitleLocked(r.Title)
	t.mu.Unlock()
}

// noteTitleLocked keeps a title the watch just read, good for the next
// Title call (within settledMaxAge). t.mu is held.
func (t *Tab) noteTitleLocked(title string) {
	t.title, t.hasTitle, t.titleAt = title, true, time.Now()
}

// hearTells listens on s for the watch's tells (watch.Binding).
func (t *Tab) hearTells(s playwright.CDPSession) {
	s.On("Runtime.bindingCalled", func(m map[string]any) {
		if name, _ := m["name"].(string); name != watch.Binding {
			return
		}
		payload, _ := m["payload"].(string)
		k, ok := watch.ParseTell(payload)
		if !ok {
			return
		}
		if k.Primed > 0 {
			t.c.env.Log.Debug().Int("tab", t.ID).Int("controls", k.Primed).Msg("watch: asked the page's form controls for their labels ahead of a walk")
			return
		}
		cid, _ := m["executionContextId"].(float64)
		t.mu.Lock()
		defer t.mu.Unlock()
		// A tell of another document's world, or one a read already
		// passed (its answer came later, but the bases only grow), is old.
		if int(cid) != t.watchCtx || t.watchDoc != t.docNav || k.To < t.lastMark {
			return
		}
		if k.To == t.lastMark {
			if t.lastTell.To == k.To {
				t.lastTell.Title = k.Title // the title changed since the tell
			}
			return
		}
		t.lastTell, t.lastMark, t.toldNew = k, k.To, true
	})
}

// markRead notes the base a read r of the watch in world cid marked: it
// passes any tell heard before it. When r found nothing changed since the
// base the last snapshot's refs stand at but values and focus (typing,
// ticking a box), they stand at r's base too; but a value can be part of
// another element's name (a field inside a checkbox's label), so the
// selectors kept for them are resolved again — all but the one of a field
// a fill just set when its value is the one change (a field's own value is
// never part of its own name: Playwright leaves it out, as accname does).
func (t *Tab) markRead(cid int, r *watch.Read) {
	t.mu.Lock()
	defer t.mu.Unlock()
	filled := t.filled
	t.filled = fillNote{}
	if cid != t.watchCtx || r.NewBase <= t.lastMark {
		return
	}
	if t.refsBase != 0 && t.refsBase == t.lastMark && r.QuietSince(t.refsBase) {
		t.refsBase = r.NewBase
		if r.Controls > 0 {
			sel, keep := t.refs.sels[filled.ref]
			t.refs.sels = nil
			if keep && r.Controls == 1 && r.Value != nil && *r.Value == filled.hash && (!r.Focus || r.ValueFoc) {
				t.refs.sels = map[string]string{filled.ref: sel}
			}
		}
	}
	t.toldNew, t.lastMark = false, r.NewBase
}

// fillNote is a fill's ref and the hash of the value it set
// (watch.ValueHash).
type fillNote struct{ ref, hash string }

// noteFill notes that a fill of ref to value begins (markRead).
func (t *Tab) noteFill(ref, value string) {
	t.mu.Lock()
	t.filled = fillNote{ref: ref, hash: watch.ValueHash(value)}
	t.mu.Unlock()
}

// toldChange returns the base the watch marked as the page changed after
// its last read, and forgets the tell; 0 when it told of none. A snapshot
// taken now is of the page after that base, which is newer than the last
// snapshot's.
func (t *Tab) toldChange() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.toldNew || !t.watchable() || t.watchDoc != t.docNav || t.busy {
		return 0
	}
	t.toldNew = false
	return t.lastTell.To
}

// walkDue returns the watch's newest base when the next whole snapshot
// walks the page whatever the watch says (the last one does not stand: a
// script, a resize or emulation since, a snapshot of part of the page) and
// no read Settle left can stand in: a snapshot taken now is after it.
// 0 when there is no such base (no read of this document yet) or a read
// has to come first.
func (t *Tab) walkDue() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.snapBase != 0 || t.lastMark == 0 || t.snap == nil || !t.watchable() || t.watchDoc != t.docNav || t.busy ||
		t.settledLocked() != nil {
		return 0
	}
	return t.lastMark
}

// noteToldTitle takes the title the watch told since base as the page's
// current one (for the next Title call), unless a read noted one since.
func (t *Tab) noteToldTitle(base int, since time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k := t.lastTell; k.To >= base && k.To == t.lastMark && t.titleAt.Before(since) {
		t.noteTitleLocked(k.Title)
	}
}

// refsStand reports whether, as far as the watch has told, the elements of
// the tab's last snapshot are all still in the page as it showed them: the
// base its refs stand at (refsBase) is still the newest one (a tell marks
// a newer one). A change whose tell is still on its way is not known yet.
func (t *Tab) refsStand() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.watchable() && t.snap != nil && t.refsBase != 0 && t.lastMark == t.refsBase &&
		t.snap.doc == t.docNav && t.watchDoc == t.docNav
}
