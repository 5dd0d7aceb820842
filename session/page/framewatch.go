// The watch in sealed frames: a frame of another site, in a renderer of its
// own, whose document the main frame's watch cannot read.

package page

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/session/watch"
)

// The main frame's watch counts the frames of its document's own tree it
// cannot enter (Read.Sealed): another site's ads, video embeds and
// widgets. Without more, a page holding one never stood unchanged (its
// frames are walked again at every snapshot, splice.go). So each child
// frame of the main frame that has a DevTools target of its own (an
// out-of-process frame: another site's) gets a watch of its own, the same
// script in an isolated world of the frame's document, over a CDP session
// of that target; each marking read of the main watch reads them beside
// it (marking too) and keeps the base each frame's watch marked. A later
// read stands for the sealed frames when every one of them was read, each
// found the same since its last mark, and none holds a frame it cannot
// enter: they then no longer count as foreign (Read.Foreign), and a page
// that changed nowhere is served its last snapshot.
//
// Anything less walks the frames as before: a sealed frame with no target
// of its own (a sandboxed one, another origin of the same site), a frame
// read that failed or took longer than frameReadTimeout, a frame whose
// document is new (its watch has no base). Mutations of the main document
// (an iframe added, removed or moved) are the main watch's; a frame's own
// navigation is a new document (its world goes with it) or a new target
// (its session goes).

// frameReadTimeout bounds the reads of the frames' watches: a read of the
// page never waits longer for them, and a frame that does not answer in
// that time is busy (framesBusy).
const frameReadTimeout = 500 * time.Millisecond

// frameWatch is the watch of one out-of-process child frame: its target's
// CDP session and the watch's world in its current document. mu orders
// its reads.
type frameWatch struct {
	mu    sync.Mutex
	s     playwright.CDPSession
	frame string // the frame's id (its target's)
	cid   int    // the world; 0 until made, or once its document went
	whole bool   // the whole watch ran in cid (reads send its name)
	// busy: its last read ran out of time (the frame's own script holds
	// its renderer); probing: a read of it is under way beside the page's
	// reads. Both under the tab's mu.
	busy, probing bool
}

// frameProbeTimeout bounds the read that tells whether a busy frame
// answers again.
const frameProbeTimeout = 2 * time.Second

// frameReads is the read of each out-of-process child frame's watch, under
// way until done is closed.
type frameReads struct {
	done  chan struct{}
	reads map[playwright.Frame]*watch.Read // the frames read (one that failed is absent)
}

// readFrames starts, beside a marking read of the main watch, the marking
// read of each child frame's watch (nil when the main frame has none);
// afterAction as for the main watch's read.
func (t *Tab) readFrames(afterAction bool) *frameReads {
	kids := t.p.MainFrame().ChildFrames()
	if len(kids) == 0 {
		return nil
	}
	fr := &frameReads{done: make(chan struct{}), reads: map[playwright.Frame]*watch.Read{}}
	t.c.Go(func() {
		defer close(fr.done)
		ctx, cancel := context.WithTimeout(context.Background(), frameReadTimeout)
		defer cancel()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, f := range kids {
			if t.probeBusyFrame(f) {
				continue
			}
			wg.Go(func() {
				r, err := t.readFrame(ctx, f, true, afterAction)
				if err != nil {
					t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("watch: a frame's watch was not read; its frame is walked")
				}
				if r != nil {
					mu.Lock()
					fr.reads[f] = r
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	})
	return fr
}

// probeBusyFrame reports whether f's watch is busy (its last read ran out
// of time): such a frame is not waited for (the page's reads do not stand
// for it, and it counts in framesBusy); a read that marks nothing goes
// beside, once at a time, and a frame that answers it is read as before.
func (t *Tab) probeBusyFrame(f playwright.Frame) bool {
	t.mu.Lock()
	fw := t.frameWatches[f]
	if fw == nil || !fw.busy {
		t.mu.Unlock()
		return false
	}
	probe := !fw.probing
	fw.probing = true
	t.mu.Unlock()
	if probe {
		t.c.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), frameProbeTimeout)
			defer cancel()
			if _, err := t.readFrame(ctx, f, false, false); err != nil {
				t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("watch: a busy frame's probe was not answered")
			}
			t.mu.Lock()
			fw.probing = false
			t.mu.Unlock()
		})
	}
	return true
}

// frameBusy marks fw, f's watch, busy: a command to its frame, sent at
// sent, ran out of the read's time. Its last mark goes: a walk meanwhile
// may show the frame without content, so no later read stands for it until
// one marks anew. A command left less than half the read's time (the
// session's opening took the rest) says nothing of the frame: not busy.
func (t *Tab) frameBusy(f playwright.Frame, fw *frameWatch, sent time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.frameMarks, f)
	if time.Since(sent) < frameReadTimeout/2 {
		return errors.New("read a frame's watch: no time left after opening its session")
	}
	fw.busy = true
	return errors.New("read a frame's watch: the frame did not answer in time (busy with its own script)")
}

// framesBusy counts the child frames whose watch's last read ran out of
// time: a walk of the page does not wait for them (frameBudget), and they
// show without content.
func (t *Tab) framesBusy() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, fw := range t.frameWatches {
		if fw.busy {
			n++
		}
	}
	return n
}

// sealedStand settles, for r, a marking read of the main watch that found
// sealed frames, whether they changed since the last snapshot: when each
// was read and found the same since its watch's last mark, they no longer
// count in r.Foreign. It keeps the frames' new marks. It waits for fr
// within ctx.
//
// A frame's last mark is older than the last snapshot's walk whenever r
// can stand for that snapshot (r.Base is its base): a marking read after
// the walk moves the main watch's base, which then is the snapshot's only
// if that read found everything, frames included, the same.
func (t *Tab) sealedStand(ctx context.Context, r *watch.Read, fr *frameReads) {
	if !fr.wait(ctx) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	stand := r.Base != 0 && r.Foreign == r.Sealed && len(fr.reads) == r.Sealed && t.framesSameLocked(fr)
	for f, fread := range fr.reads {
		if fread.NewBase != 0 {
			t.frameMarks[f] = fread.NewBase
		}
	}
	if stand {
		r.Foreign -= r.Sealed
	}
}

// framesStood waits for fr within ctx and counts the frames whose watch
// found them the same since its last mark; 0 when any read found a change
// or failed (the main read then has the part walk take every sealed
// frame, as it has when the count is not the number of its sealed frames).
func (t *Tab) framesStood(ctx context.Context, fr *frameReads) int {
	if !fr.wait(ctx) {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.framesSameLocked(fr) {
		return 0
	}
	return len(fr.reads)
}

// framesSameLocked reports whether each frame fr read was found the same
// since its watch's last mark. t.mu is held.
func (t *Tab) framesSameLocked(fr *frameReads) bool {
	for f, fread := range fr.reads {
		if b, ok := t.frameMarks[f]; !ok || !fread.SameAs(b) {
			return false
		}
	}
	return true
}

// wait waits for the reads within ctx; false when ctx ended first.
func (fr *frameReads) wait(ctx context.Context) bool {
	select {
	case <-fr.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// errNoOwnTarget: the frame is in its parent's renderer (same site); its
// document is the main watch's to read, or, when sealed, is walked.
var errNoOwnTarget = errors.New("the frame has no target of its own")

// readFrame reads (marking a base, with mark) the watch of child frame f;
// nil and no error when f has no target of its own. A read that runs out
// of time marks the frame busy, one that answers not busy.
func (t *Tab) readFrame(ctx context.Context, f playwright.Frame, mark, afterAction bool) (*watch.Read, error) {
	fw, err := t.frameWatchOf(ctx, f)
	if errors.Is(err, errNoOwnTarget) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fw.mu.Lock()
	defer fw.mu.Unlock()
	// A world gone with its document is made anew, once, as the main
	// watch's; evalWatch sends a world without the watch the whole script.
	for lost := false; ; {
		if fw.cid == 0 {
			sent := time.Now()
			res, err := sendCDP(ctx, fw.s, 0, "Page.createIsolatedWorld", map[string]any{"frameId": fw.frame, "worldName": watch.World})
			if err != nil && ctx.Err() != nil {
				return nil, t.frameBusy(f, fw, sent)
			}
			if err != nil {
				t.dropFrameWatch(f, fw)
				return nil, fmt.Errorf("open a frame's watch world: %w", err)
			}
			id, _ := res.(map[string]any)["executionContextId"].(float64)
			if id == 0 {
				t.dropFrameWatch(f, fw)
				return nil, fmt.Errorf("open a frame's watch world: no context in %v", res)
			}
			fw.cid, fw.whole = int(id), false
		}
		var sent time.Time
		var sendErr error
		r, err := evalWatch(func(params map[string]any) (any, error) {
			sent = time.Now()
			res, err := sendCDP(ctx, fw.s, 0, "Runtime.evaluate", params)
			sendErr = err
			return res, err
		}, fw.cid, fw.whole, mark, afterAction, nil)
		if sendErr != nil {
			if ctx.Err() != nil {
				return nil, t.frameBusy(f, fw, sent) // the world stands
			}
			fw.cid = 0
			if !lost {
				lost = true
				continue
			}
			return nil, fmt.Errorf("read a frame's watch: %w", sendErr)
		}
		t.mu.Lock()
		fw.busy = false
		t.mu.Unlock()
		if err != nil {
			return nil, err
		}
		fw.whole = true
		return r, nil
	}
}

// frameWatchOf is f's watch, its CDP session opened when new. The opening
// is not bounded by ctx, only waited for within it: one that ends after the
// read gave up still keeps its session for the next read (a session
// abandoned mid-opening would stay attached to the frame's target).
func (t *Tab) frameWatchOf(ctx context.Context, f playwright.Frame) (*frameWatch, error) {
	url := f.URL()
	for waited := false; ; waited = true {
		t.mu.Lock()
		fw := t.frameWatches[f]
		inProc := fw == nil && t.frameInProc[f] == url
		opening := t.frameOpening[f]
		if fw == nil && !inProc && opening == nil && !waited {
			opening = make(chan struct{})
			t.frameOpening[f] = opening
			t.c.Go(func() {
				err := t.openFrameWatch(f, url)
				if err != nil {
					t.c.env.Log.Debug().Err(err).Int("tab", t.ID).Msg("watch: no session of a frame's own")
				}
				t.mu.Lock()
				delete(t.frameOpening, f)
				t.mu.Unlock()
				close(opening)
			})
		}
		t.mu.Unlock()
		switch {
		case fw != nil:
			return fw, nil
		case inProc:
			return nil, errNoOwnTarget
		case opening == nil:
			return nil, errors.New("open a frame's CDP session: it failed")
		}
		select {
		case <-opening:
		case <-ctx.Done():
			return nil, ctxErr("open a frame's CDP session", ctx.Err())
		}
	}
}

// openFrameWatch opens the CDP session of f's target (f at url) and keeps
// it as f's watch, or notes that f has no target of its own.
func (t *Tab) openFrameWatch(f playwright.Frame, url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cdpAttachTimeout)
	defer cancel()
	s, err := call(ctx, t.c, "open a frame's CDP session", stopOn{}, func() (playwright.CDPSession, error) { return t.c.bctx.NewCDPSession(f) })
	if err != nil {
		// Playwright: "This frame does not have a separate CDP session".
		if strings.Contains(err.Error(), "separate CDP session") {
			t.mu.Lock()
			t.frameInProc[f] = url
			t.mu.Unlock()
			return nil
		}
		return err
	}
	res, err := sendCDP(ctx, s, 0, "Target.getTargetInfo", nil)
	if err != nil {
		t.detachLater(s)
		return fmt.Errorf("a frame's target: %w", err)
	}
	info, _ := res.(map[string]any)["targetInfo"].(map[string]any)
	id, _ := info["targetId"].(string)
	if id == "" {
		t.detachLater(s)
		return fmt.Errorf("a frame's target: no id in %v", res)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.frameWatches[f] != nil || f.IsDetached() {
		t.detachLater(s)
		return nil
	}
	t.frameWatches[f] = &frameWatch{s: s, frame: id}
	return nil
}

// dropFrameWatch forgets fw, f's watch, and closes its session: its target
// went (the frame left for another site, or went itself).
func (t *Tab) dropFrameWatch(f playwright.Frame, fw *frameWatch) {
	t.mu.Lock()
	if t.frameWatches[f] == fw {
		delete(t.frameWatches, f)
		delete(t.frameMarks, f)
	}
	t.mu.Unlock()
	t.detachLater(fw.s)
}

// frameGoneLocked forgets what the tab keeps of child frame f, which went.
func (t *Tab) frameGoneLocked(f playwright.Frame) {
	delete(t.frameInProc, f)
	delete(t.frameMarks, f)
	if fw := t.frameWatches[f]; fw != nil {
		delete(t.frameWatches, f)
		t.detachLater(fw.s)
	}
}

// detachLater detaches CDP session s in the background: the tab's lock
// may be held, and nothing waits for the browser's answer.
func (t *Tab) detachLater(s playwright.CDPSession) {
	t.c.Go(func() { _ = s.Detach() })
}
