package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/outdir"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// Download limits used when Config leaves them zero.
const (
	DefaultMaxDownloadBytes = 256 << 20
	DefaultMaxDownloads     = 100
)

// ErrNoDownload means no download came within the wait.
var ErrNoDownload = errors.New("no download")

func (c Config) maxDownloadBytes() int64 {
	return orDefault(c.MaxDownloadBytes, DefaultMaxDownloadBytes)
}

func (c Config) maxDownloads() int { return orDefault(c.MaxDownloads, DefaultMaxDownloads) }

// Download is one download a page started, as the session captured it.
type Download struct {
	// ID counts the session's downloads from 1.
	ID int
	// URL is where the file came from.
	URL string
	// Suggested is the file name the page suggested. It is untrusted: the
	// saved file's name is derived from it by SafeFileName.
	Suggested string
	// Path is where the file was saved in the output directory, once Done
	// and without Err.
	Path string
	// Size is the file's size in bytes, once Done.
	Size int64
	// Done is set when the download finished, failed or was refused.
	Done bool
	// Err says why the download failed or was refused; empty on success.
	Err string

	tab     *page.Tab // the tab that started it
	claimed bool
	rawURL  string              // URL uncut, to match Chromium's report of it
	pw      playwright.Download // Playwright's handle on it
	live    *liveDownload       // Chromium's report of it while it runs, once matched
}

// liveDownload is a download as Chromium reports it while it runs
// (page.DownloadEvent): the bytes it has received, which sit in the
// driver's temporary directory until it ends, count against the session's
// byte budget like the bytes already saved.
type liveDownload struct {
	url, suggested string
	received       int64
	done           bool                // completed or canceled
	cancelled      bool                // cancelled for passing the budget
	usedBefore     int64               // the budget's bytes saved when it was cancelled
	rec            *Download           // the Download captured for it; nil until matched
	pw             playwright.Download // rec's
}

// downloadLog is a session's downloads and its use of the download limits.
// The zero value is ready.
type downloadLog struct {
	mu      sync.Mutex
	list    []*Download
	seq     int                      // downloads seen, for IDs
	started int                      // downloads admitted (MaxDownloads)
	bytes   int64                    // bytes saved (MaxDownloadBytes)
	live    map[string]*liveDownload // Chromium's guid → the download's progress
	changed chan struct{}
}

// maxLive bounds the downloads in progress kept without a capture matched.
const maxLive = 64

// inFlight is the bytes the downloads in progress hold; call with mu held.
func (l *downloadLog) inFlight() int64 {
	var n int64
	for _, d := range l.live {
		n += d.received
	}
	return n
}

// match links rec and ld, both unmatched, when they are the same download
// (Chromium's id is not in Playwright's API: URL and suggested name); call
// with mu held.
func match(rec *Download, ld *liveDownload, pw playwright.Download) bool {
	if rec.live != nil || ld.rec != nil || rec.Done || rec.rawURL != ld.url || rec.Suggested != ld.suggested {
		return false
	}
	rec.live, ld.rec, ld.pw = ld, rec, pw
	return true
}

// downloadEvent holds the session's downloads to its byte budget while they
// run: the first progress report past MaxDownloadBytes (saved bytes plus
// the bytes every download in progress has received) cancels the download
// that reported it, and Chromium deletes its partial file. It runs on
// Playwright's dispatch goroutine, so the cancel runs on the generation's.
func (s *Session) downloadEvent(g *Generation, e page.DownloadEvent) {
	l := &s.downloads
	l.mu.Lock()
	if l.live == nil {
		l.live = map[string]*liveDownload{}
	}
	var cancel playwright.Download
	ld := l.live[e.GUID]
	switch {
	case e.State == "begin":
		ld = &liveDownload{url: e.URL, suggested: e.Suggested}
		l.live[e.GUID] = ld
		if g != nil && g.remote == nil && s.drv != nil {
			tmp, guid := s.drv.TempDir(), e.GUID
			g.Go(func() { s.watchPartial(g, tmp, guid, ld) })
		}
		for _, rec := range l.list {
			if match(rec, ld, rec.pw) {
				break
			}
		}
		if len(l.live) > maxLive {
			for id, d := range l.live {
				if d.done && d.rec == nil {
					delete(l.live, id)
				}
			}
		}
	case ld == nil:
		// Begun before the tab watched its downloads: checked at the end.
	case e.State == "canceled":
		ld.done = true
		delete(l.live, e.GUID) // Chromium deleted the partial file: it counts no more
	default:
		if e.State == "completed" || e.Received > ld.received {
			// The file's size (watchPartial) may be ahead of Chromium's
			// last report.
			ld.received = e.Received
		}
		if e.State == "completed" {
			ld.done = true
		}
		if !ld.done && !ld.cancelled && l.bytes+l.inFlight() > s.cfg.maxDownloadBytes() {
			ld.cancelled, ld.usedBefore = true, l.bytes
			cancel = ld.pw
		}
	}
	l.mu.Unlock()
	if cancel != nil {
		g.Go(func() { _ = cancel.Cancel() })
	}
}

// notify wakes the waiters; call with mu held.
func (l *downloadLog) notify() {
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// wait returns a channel closed at the next change; call with mu held.
func (l *downloadLog) wait() <-chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// captureDownload runs in Playwright's event dispatch, so it must not call
// the driver: the work runs on its own goroutine, which ends when the
// download does (at the latest when the browser closes).
func (s *Session) captureDownload(g *Generation, t *page.Tab, d playwright.Download) {
	shown := displayName(d.SuggestedFilename())
	l := &s.downloads
	l.mu.Lock()
	rec := &Download{URL: page.Cut(d.URL()), Suggested: d.SuggestedFilename(), tab: t, rawURL: d.URL(), pw: d}
	l.seq++
	rec.ID = l.seq
	l.list = append(l.list, rec)
	if len(l.list) > 2*s.cfg.maxDownloads() {
		l.list = l.list[len(l.list)-2*s.cfg.maxDownloads():]
	}
	refused := l.started >= s.cfg.maxDownloads()
	if refused {
		rec.Done = true
		rec.Err = fmt.Sprintf("refused: this session reached its limit of %d downloads", s.cfg.maxDownloads())
		l.notify()
	} else {
		l.started++
	}
	cancel := false
	for _, ld := range l.live {
		if match(rec, ld, d) {
			// Past the budget before Playwright reported it.
			cancel = ld.cancelled
			break
		}
	}
	l.mu.Unlock()
	if cancel {
		g.Go(func() { _ = d.Cancel() })
	}
	if refused {
		t.AddEvent(fmt.Sprintf("Download of %s %s", shown, rec.Err))
		g.Go(func() {
			_ = d.Cancel()
			_ = d.Delete()
		})
		return
	}
	t.AddEvent(fmt.Sprintf("Downloading file %s ...", shown))
	// Owned by the generation: disposing of it waits for the save to end,
	// so nothing is written into the output directory after Close.
	g.Go(func() { s.finishDownload(t, d, rec, shown) })
}

func (s *Session) finishDownload(t *page.Tab, d playwright.Download, rec *Download, shown string) {
	path, size, err := s.saveDownload(d, rec)
	l := &s.downloads
	l.mu.Lock()
	rec.Done = true
	if err != nil {
		rec.Err = err.Error()
	} else {
		rec.Path, rec.Size = path, size
	}
	l.notify()
	l.mu.Unlock()
	if err != nil {
		t.AddEvent(fmt.Sprintf("Download of %s failed: %v", shown, err))
		s.notify(NoticeWarning, "download", "download of %s failed: %v", shown, err)
		return
	}
	t.AddEvent(fmt.Sprintf("Downloaded file %s to %q (%d bytes)", shown, path, size))
	s.notify(NoticeInfo, "download", "downloaded %s (%d bytes)", shown, size)
}

// saveDownload waits for the browser to finish the download, checks it
// against the session's byte budget and copies it into the output
// directory under a name of our own. The browser's temporary copy is deleted
// in every case.
func (s *Session) saveDownload(d playwright.Download, rec *Download) (string, int64, error) {
	defer func() { _ = d.Delete() }()
	tmp, err := d.Path()
	if err != nil {
		if over := s.endLive(rec); over != nil {
			return "", 0, fmt.Errorf("refused: it was cancelled at %d bytes received, past the cap: this session's downloads may take %d bytes in all (--max-download-bytes; %d used before); its partial file was deleted", over.received, s.cfg.maxDownloadBytes(), over.usedBefore)
		}
		if f := d.Failure(); f != nil {
			return "", 0, errors.New(clip.FirstLine(strings.TrimPrefix(f.Error(), "playwright: ")))
		}
		return "", 0, errors.New(clip.FirstLine(strings.TrimPrefix(err.Error(), "playwright: ")))
	}
	st, err := os.Stat(tmp)
	if err != nil {
		s.endLive(rec)
		return "", 0, fmt.Errorf("read the browser's copy: %w", err)
	}
	size := st.Size()
	if err := s.reserveBytes(rec, size); err != nil {
		return "", 0, err
	}
	if s.cfg.OutputDir == "" {
		s.releaseBytes(size)
		return "", 0, errors.New("not saved: the server has no output directory")
	}
	root, dir, err := outdir.OpenRoot(s.cfg.OutputDir, s.principal)
	if err != nil {
		s.releaseBytes(size)
		return "", 0, fmt.Errorf("not saved: %w", err)
	}
	defer root.Close()
	dest, n, err := copyInto(root, dir, SafeFileName(rec.Suggested), tmp, size)
	if err != nil {
		s.releaseBytes(size)
		return "", 0, err
	}
	return dest, n, nil
}

// partialPoll is how often watchPartial reads the size of a download's
// partial file: Chromium reports progress only about twice a second, in
// which a fast server sends a hundred megabytes.
const partialPoll = 25 * time.Millisecond

// watchPartial holds a download Playwright writes under tmp (the driver's
// temp dir: playwright-artifacts-*/<guid>.crdownload while it runs) to the
// budget between Chromium's progress reports: it reads the partial file's
// size and reports it as progress, until the download ends, is cancelled,
// or the browser is lost. A browser that writes elsewhere (a remote one)
// leaves nothing to read: Chromium's reports alone count.
func (s *Session) watchPartial(g *Generation, tmp, guid string, ld *liveDownload) {
	pattern := filepath.Join(tmp, "playwright-artifacts-*", guid+".crdownload")
	l := &s.downloads
	tick := time.NewTicker(partialPoll)
	defer tick.Stop()
	path := ""
	for range 40 * 60 * 10 { // at most 10 minutes without an end
		select {
		case <-tick.C:
		case <-g.LostCh():
			return
		}
		l.mu.Lock()
		over := ld.done || ld.cancelled
		l.mu.Unlock()
		if over {
			return
		}
		if path == "" {
			m, _ := filepath.Glob(pattern)
			if len(m) == 0 {
				continue
			}
			path = m[0]
		}
		st, err := os.Stat(path)
		if err != nil {
			return // renamed at its end, or deleted
		}
		s.downloadEvent(g, page.DownloadEvent{GUID: guid, Received: st.Size(), State: "inProgress"})
	}
}

// endLive stops counting the bytes in progress of rec's download, and
// returns its progress when it was cancelled for the budget.
func (s *Session) endLive(rec *Download) *liveDownload {
	l := &s.downloads
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.endLive(rec)
}

// endLive is Session.endLive with mu held.
func (l *downloadLog) endLive(rec *Download) *liveDownload {
	ld := rec.live
	if ld == nil {
		return nil
	}
	for id, d := range l.live {
		if d == ld {
			delete(l.live, id)
		}
	}
	if ld.cancelled {
		return ld
	}
	return nil
}

// reserveBytes counts size, rec's finished download, against the session's
// byte budget in place of its bytes in progress, or says why it does not
// fit.
func (s *Session) reserveBytes(rec *Download, size int64) error {
	limit := s.cfg.maxDownloadBytes()
	l := &s.downloads
	l.mu.Lock()
	defer l.mu.Unlock()
	l.endLive(rec)
	if l.bytes+size > limit {
		return fmt.Errorf("refused: the file is %d bytes and this session's downloads may take %d bytes in all (%d used); the file was deleted", size, limit, l.bytes)
	}
	l.bytes += size
	return nil
}

func (s *Session) releaseBytes(size int64) {
	l := &s.downloads
	l.mu.Lock()
	l.bytes -= size
	l.mu.Unlock()
}

// copyInto copies src (size bytes) into root (whose path is dir) under
// name, or name-2, name-3… when taken. The file is created exclusively
// through the root, so nothing already there (a file, a symlink) is
// overwritten or followed.
func copyInto(root *os.Root, dir, name, src string, size int64) (string, int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", 0, fmt.Errorf("read the browser's copy: %w", err)
	}
	defer in.Close()
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i <= 1000; i++ {
		cand := name
		if i > 1 {
			cand = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		out, err := root.OpenFile(cand, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", 0, fmt.Errorf("save the download: %w", err)
		}
		// The budget was checked against size: copy no more than that.
		n, err := io.Copy(out, io.LimitReader(in, size))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			_ = root.Remove(cand)
			return "", 0, fmt.Errorf("save the download: %w", err)
		}
		return filepath.Join(dir, cand), n, nil
	}
	return "", 0, fmt.Errorf("save the download: too many files named like %s in %s", name, dir)
}

// SafeFileName turns a name a page suggested into a plain file name: no
// directories, no leading dots, only letters, digits and ._-+ (anything else
// becomes _), at most 120 bytes with the extension kept. Empty results
// become "download".
func SafeFileName(suggested string) string {
	s := strings.ReplaceAll(suggested, "\\", "/")
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '.' || r == '-' || r == '_' || r == '+':
			b.WriteRune(r)
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r >= utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s = strings.Trim(b.String(), "._ ")
	const maxLen = 120
	if len(s) > maxLen {
		ext := filepath.Ext(s)
		if len(ext) > 16 {
			ext = ""
		}
		stem := s[:maxLen-len(ext)]
		for !utf8.ValidString(stem) {
			stem = stem[:len(stem)-1]
		}
		s = stem + ext
	}
	if s == "" {
		return "download"
	}
	return s
}

// displayName is a suggested name as shown in events: one line, bounded.
func displayName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(unnamed)"
	}
	return s
}

// Downloads returns the session's recent downloads, oldest first.
func (s *Session) Downloads() []Download {
	l := &s.downloads
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Download, len(l.list))
	for i, d := range l.list {
		out[i] = *d
	}
	return out
}

// WaitDownload waits until the oldest download not yet handed to a waiter
// is done, and returns it; it waits for one to start when there is none.
// tab, when set, only considers downloads that tab started. It returns
// ErrNoDownload (wrapped) when ctx ends first. Each download is handed to
// one waiter only.
func (s *Session) WaitDownload(ctx context.Context, tab *page.Tab) (Download, error) {
	l := &s.downloads
	var mine *Download
	for {
		l.mu.Lock()
		if mine == nil {
			for _, d := range l.list {
				if !d.claimed && (tab == nil || d.tab == tab) {
					d.claimed = true
					mine = d
					break
				}
			}
		}
		if mine != nil && mine.Done {
			out := *mine
			l.mu.Unlock()
			return out, nil
		}
		ch := l.wait()
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			if mine != nil {
				// Still running: give it back so a later wait can take it.
				l.mu.Lock()
				mine.claimed = false
				l.mu.Unlock()
				return Download{}, fmt.Errorf("%w finished in time: %s is still downloading", ErrNoDownload, displayName(mine.Suggested))
			}
			return Download{}, fmt.Errorf("%w started in time", ErrNoDownload)
		}
	}
}

// PageLoadedError says a URL given to DownloadURL loaded as a page and
// started no download.
type PageLoadedError struct {
	URL string
	// Status is the page's HTTP status, 0 when it had no response.
	Status int
	// ContentType is the page's Content-Type.
	ContentType string
}

func (e *PageLoadedError) Error() string {
	return fmt.Sprintf("%s did not start a download: it loaded a page", e.URL)
}

// DownloadURL loads url in a tab of its own, so the selected tab stays
// where it is, and returns the download it starts, once finished (see
// WaitDownload). The tab is closed afterwards. It fails with a
// *PageLoadedError when url loads as a page, with the navigation's error
// when it fails without a download, and with ErrNoDownload (wrapped) when
// ctx ends first.
func (g *Generation) DownloadURL(ctx context.Context, url string) (Download, error) {
	t, p, err := g.OpenTab(ctx)
	if err != nil {
		return Download{}, fmt.Errorf("open a tab for the download: %w", err)
	}
	// Its bytes are counted as they arrive (downloadEvent); without the
	// watch, only once it ends.
	if err := t.WatchDownloads(ctx); err != nil {
		g.s.log.Debug().Err(err).Msg("download tab: no progress watch")
	}
	defer func() {
		// Closed even when ctx ended, so no tab is left behind.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = t.Close(cctx)
	}()
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	type nav struct {
		status int
		ctype  string
		err    error
	}
	navDone := make(chan nav, 1)
	wg.Go(func() {
		opts := playwright.PageGotoOptions{}
		if _, ok := wctx.Deadline(); ok {
			// ctx bounds the navigation, not Playwright's default timeout.
			opts.Timeout = playwright.Float(0)
		}
		// The tab is ours and closed afterwards: a dialog there is not the
		// agent's to handle, so it does not end the wait (page.Call).
		n, err := page.Call(wctx, g.Context, "download "+url, func() (nav, error) {
			resp, err := p.Goto(url, opts)
			if err != nil || resp == nil {
				return nav{}, err
			}
			ct, _ := resp.HeaderValue("content-type")
			return nav{status: resp.Status(), ctype: ct}, nil
		})
		n.err = err
		navDone <- n
	})
	type result struct {
		d   Download
		err error
	}
	got := make(chan result, 1)
	wg.Go(func() {
		d, err := g.s.WaitDownload(wctx, t)
		got <- result{d, err}
	})

	select {
	case r := <-got:
		return r.d, r.err
	case n := <-navDone:
		// Playwright fails a navigation that turns into a download with
		// this message; it has no error type for it.
		starting := n.err != nil && strings.Contains(n.err.Error(), "Download is starting")
		switch {
		case n.err != nil && !starting && wctx.Err() == nil:
			// No download: say why, unless one starts right now.
			select {
			case r := <-got:
				if r.err == nil {
					return r.d, nil
				}
			case <-time.After(500 * time.Millisecond):
			}
			return Download{}, fmt.Errorf("download %s: %w", url, n.err)
		case n.err == nil:
			// The URL loaded as a page; give a download it may start a
			// moment.
			select {
			case r := <-got:
				return r.d, r.err
			case <-time.After(time.Second):
				return Download{}, &PageLoadedError{URL: url, Status: n.status, ContentType: n.ctype}
			}
		}
		// A download is starting, or ctx ended: the wait has the answer.
		r := <-got
		return r.d, r.err
	}
}
