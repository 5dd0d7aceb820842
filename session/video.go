package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// ErrNoVideo means no video is being recorded in the generation.
var ErrNoVideo = errors.New("no video is being recorded")

// ErrVideoRunning means a video is already being recorded.
var ErrVideoRunning = errors.New("video recording has already been started")

// VideoOptions shape a recording (browser_start_video, or
// contextOptions.recordVideo from the start).
type VideoOptions struct {
	// VideoOptions are the frame size and rate.
	page.VideoOptions
	// Cursor draws an animated pointer travelling to each action point
	// (Playwright's action annotation without titles, 800 ms per action).
	Cursor bool
	// Actions, if set, annotates each action on every page recorded
	// (contextOptions.recordVideo.showActions); it replaces Cursor.
	Actions *page.ActionOptions
	// Save keeps the video of the n-th page recorded (counting from 0): it
	// reads the video and returns where it put it. Required.
	Save func(n int, video io.Reader) (string, error)
}

// VideoFile is one page's video when the recording stopped.
type VideoFile struct {
	// Tab is the tab the page was in.
	Tab int
	// Path is where Save put it ("" when Err is set).
	Path string
	// Err says why the video was not saved.
	Err error
}

// Video is a recording of every page of a generation: those open when it
// starts and those opened while it runs, each into its own file.
type Video struct {
	mu      sync.Mutex
	opts    VideoOptions
	dir     string // private: the driver writes the videos here
	started time.Time
	recs    []*page.Recording
	n       int // pages whose recording started (the next one's index)
	stopped bool
}

// videoKey registers the save-on-close hook (OnDispose).
const videoKey = "session.video"

// VideoRunning reports whether a video is being recorded, and since when.
func (g *Generation) VideoRunning() (started time.Time, ok bool) {
	g.mu.Lock()
	v := g.state.video
	g.mu.Unlock()
	if v == nil {
		return time.Time{}, false
	}
	return v.started, true
}

// StartVideo starts recording every page of the generation, now and as
// they open, until StopVideo or the browser closes on purpose (the session
// closes, the agent closes the browser), which saves them too. It fails
// with ErrVideoRunning when one runs.
func (g *Generation) StartVideo(ctx context.Context, o VideoOptions) error {
	if o.Save == nil {
		return errors.New("start video: no Save")
	}
	dir, err := ownedTempDir("video-")
	if err != nil {
		return err
	}
	v := &Video{opts: o, dir: dir, started: time.Now()}
	g.mu.Lock()
	if g.state.video != nil {
		g.mu.Unlock()
		_ = os.RemoveAll(dir)
		return ErrVideoRunning
	}
	g.state.video = v
	g.mu.Unlock()
	g.OnDispose(videoKey, func(ctx context.Context) {
		files := g.stopVideo(ctx, v)
		for _, f := range files {
			if f.Err != nil {
				g.s.log.Warn().Err(f.Err).Int("generation", g.N).Int("tab", f.Tab).Msg("save the video on close")
			} else {
				g.s.log.Info().Str("path", f.Path).Int("generation", g.N).Int("tab", f.Tab).Msg("saved the video on close")
			}
		}
	})
	var errs []error
	for _, t := range g.Tabs() {
		if err := g.recordTab(ctx, v, t); err != nil {
			errs = append(errs, fmt.Errorf("tab %d: %w", t.ID, err))
		}
	}
	if len(errs) > 0 && len(v.recordings()) == 0 && len(g.Tabs()) > 0 {
		// Nothing records: undo, so that a retry can start one.
		g.stopVideo(ctx, v)
		return fmt.Errorf("start video: %w", errors.Join(errs...))
	}
	return nil
}

// recordTab starts the recording of t's page into v, once.
func (g *Generation) recordTab(ctx context.Context, v *Video, t *page.Tab) error {
	v.mu.Lock()
	if v.stopped {
		v.mu.Unlock()
		return nil
	}
	for _, r := range v.recs {
		if r.Tab == t {
			v.mu.Unlock()
			return nil
		}
	}
	n := v.n
	v.n++
	v.mu.Unlock()
	rec, err := t.StartRecording(ctx, filepath.Join(v.dir, fmt.Sprintf("page-%d.webm", n)), v.opts.VideoOptions)
	if err != nil {
		return err
	}
	if a := v.opts.Actions; a != nil {
		if err := t.ShowActions(ctx, *a); err != nil {
			g.s.log.Debug().Err(err).Int("tab", t.ID).Msg("annotate the actions of the recorded tab")
		}
	} else if v.opts.Cursor {
		// As upstream: the pointer without titles, paced for travel.
		_ = t.ShowActions(ctx, page.ActionOptions{Cursor: "pointer", Duration: 800 * time.Millisecond, TitleStyle: "display: none"})
	}
	v.mu.Lock()
	stopped := v.stopped
	if !stopped {
		v.recs = append(v.recs, rec)
	}
	v.mu.Unlock()
	if stopped {
		_ = rec.Stop(ctx) // the recording stopped meanwhile
	}
	return nil
}

func (v *Video) recordings() []*page.Recording {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]*page.Recording(nil), v.recs...)
}

// videoTabOpened starts recording a tab opened while a video runs. It runs
// on Playwright's dispatch goroutine: the work goes to the context's own.
func (g *Generation) videoTabOpened(t *page.Tab) {
	g.mu.Lock()
	v := g.state.video
	g.mu.Unlock()
	if v == nil || g.Context == nil {
		return
	}
	g.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := g.recordTab(ctx, v, t); err != nil {
			g.s.log.Debug().Err(err).Int("tab", t.ID).Msg("record the new tab's video")
		}
	})
}

// StopVideo stops the recording and saves each page's video through the
// Save of StartVideo, in the order the pages' recordings started. A tab
// closed through CloseTab has its video (it was stopped before the close);
// a page that closed by itself has none (Playwright drops it with the
// page).
func (g *Generation) StopVideo(ctx context.Context) ([]VideoFile, error) {
	g.mu.Lock()
	v := g.state.video
	g.mu.Unlock()
	if v == nil {
		return nil, ErrNoVideo
	}
	g.OnDispose(videoKey, nil)
	return g.stopVideo(ctx, v), nil
}

// stopVideo ends v: each recording is stopped and saved, its private file
// removed.
func (g *Generation) stopVideo(ctx context.Context, v *Video) []VideoFile {
	v.mu.Lock()
	v.stopped = true
	recs := v.recs
	v.recs = nil
	v.mu.Unlock()
	g.mu.Lock()
	if g.state.video == v {
		g.state.video = nil
	}
	g.mu.Unlock()
	defer os.RemoveAll(v.dir)
	var files []VideoFile
	for i, r := range recs {
		f := VideoFile{Tab: r.Tab.ID}
		if r.Tab.Closed() && !r.Saved() {
			f.Err = fmt.Errorf("tab %d closed by itself while it was recorded: Playwright drops the video of a page that closes", r.Tab.ID)
		} else if err := r.Stop(ctx); err != nil {
			f.Err = fmt.Errorf("stop the video of tab %d: %w", r.Tab.ID, err)
		} else {
			f.Path, f.Err = saveVideo(r.Path, func(rd io.Reader) (string, error) { return v.opts.Save(i, rd) })
		}
		files = append(files, f)
	}
	return files
}

func saveVideo(p string, save func(io.Reader) (string, error)) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", fmt.Errorf("read the video: %w", err)
	}
	defer fh.Close()
	return save(fh)
}

// VideoName is the name of the n-th page's video (from 0) of a recording
// named base: base itself, then base-1, base-2… before the extension, as
// upstream names them.
func VideoName(base string, n int) string {
	if n == 0 {
		return base
	}
	ext := filepath.Ext(base)
	return fmt.Sprintf("%s-%d%s", base[:len(base)-len(ext)], n, ext)
}

// RecordVideo is contextOptions.recordVideo: every generation of the
// session records its pages from the start, saved into the output
// directory when the browser closes on purpose.
type RecordVideo struct {
	// Dir is the videos' directory inside the session's part of the
	// output directory; "" for that part itself.
	Dir string
	// Size is the frame size; nil for Playwright's.
	Size *page.Size
	// FPS is the frame rate; 0 for Playwright's.
	FPS int
	// Actions, if set, annotates each action (showActions).
	Actions *page.ActionOptions
}

// startRecordVideo starts the recording of contextOptions.recordVideo on a
// new generation.
func (g *Generation) startRecordVideo(ctx context.Context) error {
	rv := g.s.cfg.RecordVideo
	if rv == nil {
		return nil
	}
	base := filepath.Join(rv.Dir, outdir.Stamped("video", ".webm"))
	s := g.s
	return g.StartVideo(ctx, VideoOptions{
		VideoOptions: page.VideoOptions{Size: rv.Size, FPS: rv.FPS},
		Actions:      rv.Actions,
		Save: func(n int, r io.Reader) (string, error) {
			if s.cfg.OutputDir == "" {
				return "", errors.New("not saved: the server has no output directory")
			}
			a, err := outdir.Open(outdir.Options{Base: s.cfg.OutputDir, Principal: s.principal, Log: s.log})
			if err != nil {
				return "", err
			}
			defer a.Close()
			return a.WriteFrom(VideoName(base, n), "video", ".webm", func(w io.Writer) error {
				_, err := io.Copy(w, r)
				return err
			})
		},
	})
}

// CloseTab closes t; while a video runs, t's recording is stopped first, so
// that its video is kept (Playwright drops the video of a closed page) and
// saved with the others when the video stops.
func (g *Generation) CloseTab(ctx context.Context, t *page.Tab) error {
	g.mu.Lock()
	v := g.state.video
	g.mu.Unlock()
	if v != nil {
		for _, r := range v.recordings() {
			if r.Tab == t {
				if err := r.Stop(ctx); err != nil {
					g.s.log.Warn().Err(err).Int("tab", t.ID).Msg("stop the video of a tab before closing it")
				}
			}
		}
	}
	return t.Close(ctx)
}
