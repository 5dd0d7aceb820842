package tools

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"
	"github.com/cloakmcp/cloakbrowser-mcp/pkg/driver"
	"github.com/cloakmcp/cloakbrowser-mcp/session"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// videoTools are upstream's --caps=devtools video tools: a recording of
// every page through Playwright's screencast (ffmpeg encodes it: the
// server links the one it found for the driver, pkg/driver), and the
// overlays Playwright draws for whoever watches it.
func videoTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: upstreamDef("browser_start_video"), Cap: "devtools", Handle: tabTool("browser_start_video", quiet, startVideo)},
		{Def: upstreamDef("browser_stop_video"), Cap: "devtools", Handle: tabTool("browser_stop_video", quiet, stopVideo)},
		{Def: upstreamDef("browser_video_chapter"), Cap: "devtools", Handle: tabTool("browser_video_chapter", quiet, videoChapter)},
		{Def: upstreamDef("browser_video_show_actions"), Cap: "devtools", Handle: tabTool("browser_video_show_actions", quiet, videoShowActions)},
		{Def: upstreamDef("browser_video_hide_actions"), Cap: "devtools", Handle: tabTool("browser_video_hide_actions", quiet, videoHideActions)},
	}
}

// maxVideoSide bounds a video's width and height, and maxVideoFPS its
// frame rate: past them ffmpeg's encoder only burns the machine.
const (
	maxVideoSide = 8192
	maxVideoFPS  = 60
	// maxOverlayMs bounds a chapter card or an annotation: the call waits
	// out a chapter card.
	maxOverlayMs = 60_000
	// maxCardText bounds a chapter's title and description and a style.
	maxCardText = 1000
)

// ffmpegReady reports whether video can be recorded: an error wrapping
// driver.ErrNoFFmpeg that says what to install when not.
func (env *Env) ffmpegReady() error {
	if env.FFmpeg == nil {
		return driver.ErrNoFFmpeg
	}
	return env.FFmpeg()
}

func startVideo(c *tabCall) error {
	if err := c.env.ffmpegReady(); err != nil {
		return err
	}
	var o session.VideoOptions
	if s, ok := c.args.Raw("size").(map[string]any); ok {
		w, _ := s["width"].(float64)
		h, _ := s["height"].(float64)
		if w < 1 || h < 1 || w > maxVideoSide || h > maxVideoSide || w != math.Trunc(w) || h != math.Trunc(h) {
			return fmt.Errorf("size %vx%v: width and height must be whole numbers from 1 to %d", w, h, maxVideoSide)
		}
		o.Size = &page.Size{Width: int(w), Height: int(h)}
	}
	if c.args.Has("fps") {
		fps := c.args.Number("fps", 0)
		if fps < 1 || fps > maxVideoFPS || fps != math.Trunc(fps) {
			return fmt.Errorf("fps %v: must be a whole number from 1 to %d", fps, maxVideoFPS)
		}
		o.FPS = int(fps)
	}
	o.Cursor = c.args.Bool("cursor", false)
	name := c.args.String("filename", "")
	if len(name) > 1024 || len(filepath.Base(name)) > 200 {
		return fmt.Errorf("filename is too long: at most 200 bytes for the name and 1024 for the path")
	}
	if name == "" {
		name = outdir.Stamped("video", ".webm")
	} else if !strings.EqualFold(filepath.Ext(name), ".webm") {
		name += ".webm" // Playwright's encoder writes WebM only
	}
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return err
	}
	_, _, err = a.Resolve(name, "video", ".webm")
	a.Close()
	if err != nil {
		return err // checked now, not when the video is saved
	}
	env, sess := c.env, c.sess
	o.Save = func(n int, r io.Reader) (string, error) {
		a, err := env.filesOf(sess)
		if err != nil {
			return "", err
		}
		defer a.Close()
		return a.WriteFrom(session.VideoName(name, n), "video", ".webm", func(w io.Writer) error {
			_, err := io.Copy(w, r)
			return err
		})
	}
	switch err := c.gen.StartVideo(c.ctx, o); {
	case errors.Is(err, session.ErrVideoRunning):
		return fmt.Errorf("%w: stop it with browser_stop_video first", err)
	case err != nil:
		return err
	}
	c.resp.Result("Video recording started.")
	return nil
}

func stopVideo(c *tabCall) error {
	started, _ := c.gen.VideoRunning()
	files, err := c.gen.StopVideo(c.ctx)
	if errors.Is(err, session.ErrNoVideo) || err == nil && len(files) == 0 {
		c.resp.Result("No videos were recorded.")
		return nil
	}
	if err != nil {
		return fmt.Errorf("stop video: %w", err)
	}
	saved := 0
	for _, f := range files {
		if f.Err != nil {
			c.resp.Result("- Tab %d: not saved: %v", f.Tab, f.Err)
			continue
		}
		saved++
		c.resp.Result("- [Video](%s)", c.env.link(f.Path))
		c.publish(f.Path, "Video")
	}
	if saved == 0 {
		return fmt.Errorf("no video was saved (%s of recording)", time.Since(started).Round(time.Second))
	}
	return nil
}

func videoChapter(c *tabCall) error {
	title, desc := c.args.String("title", ""), c.args.String("description", "")
	if strings.TrimSpace(title) == "" {
		return fmt.Errorf("title must not be empty")
	}
	if len(title) > maxCardText || len(desc) > maxCardText {
		return fmt.Errorf("title and description must be at most %d bytes each (a card on the screen); shorten them", maxCardText)
	}
	d, err := overlayDuration(c.args, "duration")
	if err != nil {
		return err
	}
	if err := c.tab.ShowChapter(c.ctx, title, desc, d); err != nil {
		return fmt.Errorf("video chapter: %w", err)
	}
	c.resp.Result("Chapter '%s' added.", title)
	return nil
}

func videoShowActions(c *tabCall) error {
	d, err := overlayDuration(c.args, "duration")
	if err != nil {
		return err
	}
	o := page.ActionOptions{Duration: d, Position: c.args.String("position", ""), Cursor: c.args.String("cursor", "")}
	if st, ok := c.args.Raw("style").(map[string]any); ok {
		o.PointStyle, _ = st["point"].(string)
		o.HighlightStyle, _ = st["highlight"].(string)
		o.TitleStyle, _ = st["title"].(string)
		for _, css := range []string{o.PointStyle, o.HighlightStyle, o.TitleStyle} {
			if strings.ContainsAny(css, "<>") || len(css) > maxCardText {
				return fmt.Errorf("style values must be inline CSS declarations, e.g. \"outline: 2px solid #333\"")
			}
		}
	}
	if err := c.tab.ShowActions(c.ctx, o); err != nil {
		return fmt.Errorf("show actions: %w", err)
	}
	c.resp.Result("Action annotations enabled.")
	return nil
}

func videoHideActions(c *tabCall) error {
	if err := c.tab.HideActions(c.ctx); err != nil {
		return fmt.Errorf("hide actions: %w", err)
	}
	c.resp.Result("Action annotations disabled.")
	return nil
}

// overlayDuration reads a duration in milliseconds (0 when absent: the
// overlay's own default).
func overlayDuration(a Args, key string) (time.Duration, error) {
	if !a.Has(key) {
		return 0, nil
	}
	ms := a.Number(key, 0)
	if ms < 1 || ms > maxOverlayMs {
		return 0, fmt.Errorf("%s %v: must be 1 to %d milliseconds", key, ms, maxOverlayMs)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
