package tools

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/session"
)

// Downloads started by any page are captured by the session (saved into the
// output directory, reported under ### Events); these tools wait for one, or
// download a URL.
func downloadsTools() []*Tool {
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: optDef("browser_wait_for_download", "Wait for a download",
			"Wait for the next download to finish (one a page action started, or starts within the timeout) and return where it was saved in the output directory", true,
			props{
				"timeout":  map[string]any{"type": "number", "minimum": 0, "maximum": 120, "description": "Seconds to wait, at most 120 (default 30)"},
				"filename": pStr("Rename the saved file to this name, relative to the output directory"),
			}), Cap: "downloads", Handle: tabTool("browser_wait_for_download", quiet, waitForDownload)},
		{Def: optDef("browser_download", "Download a URL",
			"Download a URL with the browser (its cookies and session) into the output directory, without leaving the current page", false,
			props{
				"url":      pStr("The URL to download"),
				"filename": pStr("File name to save it as, relative to the output directory (default: the name the server suggests, made safe)"),
				"timeout":  map[string]any{"type": "number", "minimum": 1, "maximum": 300, "description": "Seconds to wait for the download, at most 300 (default 60)"},
			}, "url"), Cap: "downloads", Handle: tabTool("browser_download", quiet, downloadURL)},
	}
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// reportDownload renders a finished download, renaming it first if the agent
// named the file.
func (c *tabCall) reportDownload(d session.Download) error {
	if d.Err != "" {
		msg := d.Err
		if !strings.HasPrefix(msg, "refused") {
			msg = "failed: " + msg
		}
		return fmt.Errorf("download of %s %s", d.Suggested, msg)
	}
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return err
	}
	defer a.Close()
	path := d.Path
	if name := c.args.String("filename", ""); name != "" {
		// Renamed inside the caller's directory, through its root.
		p, err := a.Rename(d.Path, name, "download", filepath.Ext(d.Path))
		if err != nil {
			return fmt.Errorf("rename the download: %w; it stays at %s", err, c.env.link(d.Path))
		}
		path = p
	}
	a.Evict(path)
	c.resp.Result("Downloaded %s (%d bytes) from %s", d.Suggested, d.Size, d.URL)
	c.resp.Result("- [%s](%s)", filepath.Base(path), c.env.link(path))
	c.publish(path, "Download")
	return nil
}

func waitForDownload(c *tabCall) error {
	timeout := seconds(c.args.Number("timeout", 30))
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	d, err := c.sess.WaitDownload(ctx, nil)
	if errors.Is(err, session.ErrNoDownload) {
		return fmt.Errorf("%w within %v: start one with a page action (click its link) first", err, timeout)
	}
	if err != nil {
		return err
	}
	return c.reportDownload(d)
}

func downloadURL(c *tabCall) error {
	u, err := checkURL(c.args.String("url", ""), c.env.AllowUnrestrictedFileAccess)
	if err != nil {
		return err
	}
	timeout := seconds(c.args.Number("timeout", 60))
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	defer cancel()
	// A tab of its own, so the current page stays where it is; a URL that
	// turns out to be a page, not a file, is shown there and dropped.
	d, err := c.gen.DownloadURL(ctx, u)
	var loaded *session.PageLoadedError
	switch {
	case errors.As(err, &loaded):
		what := "a page"
		if loaded.Status != 0 {
			what = fmt.Sprintf("a page (HTTP %d, %s)", loaded.Status, loaded.ContentType)
		}
		return fmt.Errorf("%s did not start a download: it loaded %s; use browser_navigate to view it", u, what)
	case errors.Is(err, session.ErrNoDownload):
		return fmt.Errorf("%w within %v", err, timeout)
	case err != nil:
		return err
	}
	return c.reportDownload(d)
}
