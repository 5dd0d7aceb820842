package page

import (
	"context"
	"sync"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Video: a tab's page recorded through Playwright's screencast (encoded by
// the ffmpeg the driver links, pkg/driver), and the overlays Playwright
// draws for a viewer of the video — a chapter card, action callouts. The
// overlays live in Playwright's utility world, as its highlights do: no
// script of ours runs in the page's world.

// VideoOptions shape a recording. Zero values are Playwright's: the
// viewport scaled down to fit 800x800, 25 frames per second.
type VideoOptions struct {
	// Size is the frame size; nil for Playwright's.
	Size *Size
	// FPS is the frame rate; 0 for 25.
	FPS int
}

// Recording is a video of one page being recorded into a private file.
type Recording struct {
	// Tab is the tab recorded.
	Tab *Tab
	// Path is the file the video is saved to when it stops: a private
	// path of the lifecycle's, never one an agent named.
	Path string
	sc   playwright.Screencast

	mu      sync.Mutex
	stopped bool
	stopErr error
}

// StartRecording starts recording the tab's page into path, saved there by
// Stop (or lost with the page if it closes first: see Generation.CloseTab).
func (t *Tab) StartRecording(ctx context.Context, path string, o VideoOptions) (*Recording, error) {
	return call(ctx, t.c, "start video", stopOn{}, func() (*Recording, error) {
		sc, err := t.p.Screencast()
		if err != nil {
			return nil, err
		}
		opts := playwright.ScreencastStartOptions{Path: playwright.String(path)}
		if o.Size != nil {
			opts.Size = &playwright.Size{Width: o.Size.Width, Height: o.Size.Height}
		}
		if o.FPS > 0 {
			opts.Fps = playwright.Int(o.FPS)
		}
		if err := sc.Start(opts); err != nil {
			return nil, err
		}
		return &Recording{Tab: t, Path: path, sc: sc}, nil
	})
}

// Stop ends the recording and saves the video to r.Path. A second Stop
// returns the first one's answer.
func (r *Recording) Stop(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.stopped {
		r.stopErr = run(ctx, r.Tab.c, "stop video", stopOn{}, r.sc.Stop)
		r.stopped = true
	}
	return r.stopErr
}

// Saved reports whether Stop saved the video to r.Path.
func (r *Recording) Saved() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopped && r.stopErr == nil
}

// ShowChapter shows Playwright's chapter card (the title, and description
// when not empty, centred over a blurred page) for d, or 2 s when d is
// zero; it returns once the card is gone.
func (t *Tab) ShowChapter(ctx context.Context, title, description string, d time.Duration) error {
	opts := playwright.ScreencastShowChapterOptions{}
	if description != "" {
		opts.Description = playwright.String(description)
	}
	if d > 0 {
		opts.Duration = playwright.Float(float64(d.Milliseconds()))
	}
	return run(ctx, t.c, "show a video chapter", stopOn{modal: t}, func() error {
		sc, err := t.p.Screencast()
		if err != nil {
			return err
		}
		return sc.ShowChapter(title, opts)
	})
}

// ActionOptions shape the annotations of actions (ShowActions). Zero
// values are Playwright's: 500 ms, top-right, a pointer cursor, the
// default title style and no point or highlight decoration.
type ActionOptions struct {
	Duration time.Duration
	// Position is top-left, top, top-right, bottom-left, bottom or
	// bottom-right.
	Position string
	// Cursor is "pointer" or "none".
	Cursor string
	// FontSize is the title's font size in pixels; 0 for Playwright's.
	FontSize int
	// PointStyle, HighlightStyle and TitleStyle are CSS declarations of
	// the action point marker, the target's box and the action title.
	PointStyle, HighlightStyle, TitleStyle string
}

// ShowActions makes Playwright annotate the actions that follow on the
// tab's page: a callout naming each action and, when styled, its point
// and target.
func (t *Tab) ShowActions(ctx context.Context, o ActionOptions) error {
	opts := playwright.ScreencastShowActionsOptions{}
	if o.Duration > 0 {
		opts.Duration = playwright.Float(float64(o.Duration.Milliseconds()))
	}
	if o.Position != "" {
		pos := playwright.AnnotatePosition(o.Position)
		opts.Position = &pos
	}
	if o.Cursor != "" {
		c := playwright.ScreencastCursor(o.Cursor)
		opts.Cursor = &c
	}
	if o.FontSize > 0 {
		opts.FontSize = playwright.Int(o.FontSize)
	}
	if o.PointStyle != "" || o.HighlightStyle != "" || o.TitleStyle != "" {
		st := &playwright.ScreencastActionStyle{}
		if o.PointStyle != "" {
			st.Point = playwright.String(o.PointStyle)
		}
		if o.HighlightStyle != "" {
			st.Highlight = playwright.String(o.HighlightStyle)
		}
		if o.TitleStyle != "" {
			st.Title = playwright.String(o.TitleStyle)
		}
		opts.Style = st
	}
	return run(ctx, t.c, "show actions", stopOn{}, func() error {
		sc, err := t.p.Screencast()
		if err != nil {
			return err
		}
		return sc.ShowActions(opts)
	})
}

// HideActions ends the annotations of ShowActions.
func (t *Tab) HideActions(ctx context.Context) error {
	return run(ctx, t.c, "hide actions", stopOn{}, func() error {
		sc, err := t.p.Screencast()
		if err != nil {
			return err
		}
		return sc.HideActions()
	})
}
