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
	sizeProp := map[string]any{
		"type": "object", "description": "Video size", "additionalProperties": false, "required": []string{"width", "height"},
		"properties": map[string]any{"width": pNum("Video width"), "height": pNum("Video height")},
	}
	styleProp := map[string]any{
		"type": "object", "description": "Styles of the action decorations.", "additionalProperties": false,
		"properties": map[string]any{
			"point":     pStr(`CSS declarations for the zero-sized marker centered on the action point, e.g. "width: 20px; height: 20px; border-radius: 50%; background: red". Not shown when omitted.`),
			"highlight": pStr(`CSS declarations for the box that covers the target element, e.g. "outline: 2px solid #333". Not shown when omitted.`),
			"title":     pStr(`CSS declarations for the action title, e.g. "font-size: 16px".`),
		},
	}
	return []*Tool{
		{Def: optDef("browser_start_video", "Start video", "Start video recording", true, props{
			"filename": pStr("File name to save the video to, relative to the output directory. If not specified, the video is saved into the output directory as `video-{timestamp}.webm`."),
			"size":     sizeProp,
			"fps":      pNum("Video frame rate in frames per second, defaults to 25"),
			"cursor":   pBool("Render an animated mouse cursor that travels to each action point. Paces actions by 800ms so that the cursor has time to travel."),
		}), Cap: "devtools", Handle: tabTool("browser_start_video", quiet, startVideo)},
		{Def: optDef("browser_stop_video", "Stop video", "Stop video recording", true, props{}),
			Cap: "devtools", Handle: tabTool("browser_stop_video", quiet, stopVideo)},
		{Def: optDef("browser_video_chapter", "Video chapter", "Add a chapter marker to the video recording. Shows a full-screen chapter card with blurred backdrop.", true, props{
			"title":       pStr("Chapter title"),
			"description": pStr("Chapter description"),
			"duration":    pNum("Duration in milliseconds to show the chapter card"),
		}, "title"), Cap: "devtools", Handle: tabTool("browser_video_chapter", quiet, videoChapter)},
		{Def: optDef("browser_video_show_actions", "Show action overlays", "Annotate subsequent actions performed on the page with a callout that names the action and, when styled, marks the action point and highlights the target element. Useful while video recording or screencasting.", true, props{
			"duration": pNum("How long each action annotation stays on screen, in milliseconds. Defaults to 500."),
			"position": pEnum("Where to place the action title relative to the page. Defaults to top-right.", "top-left", "top", "top-right", "bottom-left", "bottom", "bottom-right"),
			"cursor":   pEnum(`Cursor decoration for pointer actions. "pointer" (default) animates a mouse pointer from the previous action point to the next one; "none" disables the cursor decoration.`, "none", "pointer"),
			"style":    styleProp,
		}), Cap: "devtools", Handle: tabTool("browser_video_show_actions", quiet, videoShowActions)},
		{Def: optDef("browser_video_hide_actions", "Hide action overlays", "Stop annotating actions performed on the page.", true, props{}),
			Cap: "devtools", Handle: tabTool("browser_video_hide_actions", quiet, videoHideActions)},
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
