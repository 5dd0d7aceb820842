package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/mcptest"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// probeDuration is ffprobe's duration of a video file, in seconds.
func probeDuration(t *testing.T, p string) float64 {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", p).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v\n%s (install it: apt-get install ffmpeg)", p, err, out)
	}
	d, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		t.Fatalf("ffprobe %s printed %q", p, out)
	}
	return d
}

func TestVideoRecording(t *testing.T) {
	c, _ := familyServer(t)
	srv := familyPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/families.html"}, "Family bench")
	must(t, c, "browser_start_video", map[string]any{"filename": "session", "size": map[string]any{"width": 640, "height": 360}}, "Video recording started.")
	fails(t, c, "browser_start_video", nil, "already been started")
	must(t, c, "browser_video_show_actions", map[string]any{"position": "top-left"}, "Action annotations enabled.")
	// A 2 s chapter card: the call returns once it is gone, so the video
	// lasts at least that long.
	must(t, c, "browser_video_chapter", map[string]any{"title": "Loading items", "description": "the first step", "duration": 2000}, "Chapter 'Loading items' added.")
	c.MustCall(t, "browser_click", map[string]any{"target": "text=Load items"})
	must(t, c, "browser_video_hide_actions", nil, "Action annotations disabled.")
	res := must(t, c, "browser_stop_video", nil, "session.webm")
	file := linkedFile(t, res)
	d := probeDuration(t, file)
	if d < 2 || d > 120 {
		t.Fatalf("video lasts %.2f s; want at least the 2 s chapter card", d)
	}
	// The chapter card (a dark box centred over the light page) is in the
	// video: the centre is darker while it shows than at the end.
	card, end := centreLuma(t, file, "-ss", "1"), centreLuma(t, file, "-sseof", "-0.3")
	if card+40 > end {
		t.Fatalf("no chapter card in the video: centre luma %d while it shows, %d at the end", card, end)
	}
	// The click's action callout ("Click locator(…)", a dark label at the
	// top left, where show_actions put it) is in the video: the strip
	// across the top left, white with the page's heading in every other
	// frame (chapter card included: it is centred), is darker in some frame
	// than at the end.
	strip := frameLumas(t, file, "crop=160:16:0:0")
	darkest := 255
	for _, l := range strip {
		darkest = min(darkest, l)
	}
	if last := strip[len(strip)-1]; darkest+40 > last {
		t.Fatalf("no action callout in the video: the top-left strip's darkest frame is %d, the last %d (frames: %v)", darkest, last, strip)
	}
	must(t, c, "browser_stop_video", nil, "No videos were recorded.")
}

// TestVideoTabsClosedWhileRecorded: a tab the agent closes while a video
// runs keeps its video (stopped before the close); a page that closes by
// itself loses its video, and the answer names the tab and why.
func TestVideoTabsClosedWhileRecorded(t *testing.T) {
	c, _ := familyServer(t)
	srv := familyPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/families.html"}, "Family bench")
	must(t, c, "browser_start_video", map[string]any{"filename": "tabs"}, "Video recording started.")
	must(t, c, "browser_tabs", map[string]any{"action": "new", "url": srv.URL + "/families.html"}, "Families")
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0}, "")
	// A popup the page opens, and later closes: not through our tools.
	c.MustCall(t, "browser_evaluate", map[string]any{"function": "() => { window.__popup = window.open(location.href); }"})
	testtier.Eventually(t, 10*time.Second, "the popup in the tab list", func() bool {
		return strings.Count(c.MustCall(t, "browser_tabs", map[string]any{"action": "list"}), "[Families]") == 3
	})
	time.Sleep(time.Second) // a second of frames for each page
	must(t, c, "browser_tabs", map[string]any{"action": "close", "index": 1}, "")
	must(t, c, "browser_tabs", map[string]any{"action": "select", "index": 0}, "")
	c.MustCall(t, "browser_evaluate", map[string]any{"function": "() => { window.__popup.close(); }"})
	testtier.Eventually(t, 10*time.Second, "the popup the page closed to leave the tab list", func() bool {
		return strings.Count(c.MustCall(t, "browser_tabs", map[string]any{"action": "list"}), "[Families]") == 1
	})
	res := mcptest.Text(c.Call(t, "browser_stop_video", nil))
	links := linkRE.FindAllStringSubmatch(res, -1)
	if len(links) != 2 {
		t.Fatalf("want the videos of the first tab and of the tab the agent closed, got %d links:\n%s", len(links), res)
	}
	for _, m := range links {
		p, err := filepath.Abs(m[1])
		if err != nil {
			t.Fatal(err)
		}
		if d := probeDuration(t, p); d < 0.5 {
			t.Errorf("%s lasts %.2f s; want the second each page was shown", p, d)
		}
	}
	wantIn(t, "stop video", res, "closed by itself while it was recorded")
}

// frameLumas is the mean gray level (0-255) of the region crop selects
// (an ffmpeg crop filter) in every frame of the video, in order.
func frameLumas(t *testing.T, file, crop string) []int {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-i", file, "-vf", crop+",scale=1:1,format=gray", "-f", "rawvideo", "-").Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("ffmpeg %s %s: %v (%d frames)", file, crop, err, len(out))
	}
	l := make([]int, len(out))
	for i, b := range out {
		l[i] = int(b)
	}
	return l
}

func TestVideoWithoutFFmpeg(t *testing.T) {
	c, _ := familyServer(t, "--ffmpeg-path", "/nonexistent/ffmpeg")
	srv := familyPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/families.html"}, "Family bench")
	fails(t, c, "browser_start_video", nil, "video needs ffmpeg: install it (apt-get install ffmpeg) or pass --ffmpeg-path")
	// The server keeps serving.
	must(t, c, "browser_snapshot", nil, "Family bench")
}

// TestDropinRecordVideo: contextOptions.recordVideo in the config file
// records from the start; closing the browser saves the video into dir.
//
// On a machine as busy as the README's test command (two runs of it in a
// row, and 1 of 12 recordings beside five CPU hogs and the largest snapshot
// tests) the video held no frame of the page at all: 1.1 s of the blank
// page the recording began on, nothing after the navigation. Neither
// Playwright alone (a context's recordVideo, or its screencast started
// before the navigation in successive contexts of one browser, 12 and 16
// runs under the same load) nor the server's binary with a browser of its
// own (36 runs) did it; the cause is not known. Such a video gets one more
// recording, which must pass.
func TestDropinRecordVideo(t *testing.T) {
	if recordDropinVideo(t, false) {
		t.Log("the recording holds no frame of the page (only the blank page it began on): recording again")
		recordDropinVideo(t, true)
	}
}

// recordDropinVideo runs TestDropinRecordVideo's session and checks its
// video. It reports a video with no frame of the page (blank) instead of
// failing, unless last.
func recordDropinVideo(t *testing.T, last bool) (blank bool) {
	cfgFile := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfgFile, []byte(`{"browser": {"contextOptions": {"recordVideo": {"dir": "videos", "size": {"width": 640, "height": 360}, "fps": 10, "showActions": {"position": "top-left", "duration": 1500}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, out := inProcess(t, "--config", cfgFile)
	srv := familyPages(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL + "/families.html"}, "Family bench")
	c.MustCall(t, "browser_click", map[string]any{"target": "text=Load items"})
	time.Sleep(2 * time.Second) // the callout's 1.5 s, then frames without it
	c.MustCall(t, "browser_close", nil)
	var files []string
	testtier.Eventually(t, 30*time.Second, "a video in the recordVideo dir after the browser closed", func() bool {
		files, _ = filepath.Glob(filepath.Join(out, "videos", "video-*.webm"))
		return len(files) > 0
	})
	d := probeDuration(t, files[0])
	if d <= 0 {
		t.Fatalf("video lasts %.2f s", d)
	}
	// fps 10, not Playwright's 25.
	strip := frameLumas(t, files[0], "crop=160:16:0:0")
	if fps := float64(len(strip)) / d; fps < 5 || fps > 15 {
		t.Errorf("%d frames in %.2f s (%.1f per second); want about 10 per second", len(strip), d, fps)
	}
	// The page's heading, at the top left, is in every frame that shows
	// the page: a video where that corner is white throughout holds none.
	if !last && !slices.ContainsFunc(frameLumas(t, files[0], "crop=160:40:0:0"), func(l int) bool { return l < 245 }) {
		return true
	}
	// showActions: the click's callout at the top left, as in
	// TestVideoRecording.
	darkest := 255
	for _, l := range strip {
		darkest = min(darkest, l)
	}
	if last := strip[len(strip)-1]; darkest+40 > last {
		t.Fatalf("no action callout in the video (%.2f s): the top-left strip's darkest frame is %d, the last %d (frames: %v)", d, darkest, last, strip)
	}
	return false
}

// centreLuma is the mean gray level (0-255) of the centre 160x60 pixels of
// the frame seek selects.
func centreLuma(t *testing.T, file string, seek ...string) int {
	t.Helper()
	args := append([]string{"-v", "error"}, seek...)
	args = append(args, "-i", file, "-frames:v", "1", "-vf", "crop=160:60,scale=1:1,format=gray", "-f", "rawvideo", "-")
	out, err := exec.Command("ffmpeg", args...).Output()
	if err != nil || len(out) != 1 {
		t.Fatalf("ffmpeg %v: %v (%d bytes)", args, err, len(out))
	}
	return int(out[0])
}
