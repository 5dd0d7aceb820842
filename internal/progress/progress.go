// Package progress tells a person how a download is going: a bar with bytes,
// rate and ETA on a terminal (github.com/schollz/progressbar/v3), plain
// lines elsewhere (a log file, a CI job, a pipe). The installer
// (`cloakbrowser-mcp install`) uses it for the CloakBrowser archive.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Options say where and how to report.
type Options struct {
	// Out receives the report. If nil, os.Stderr.
	Out io.Writer
	// Terminal draws a bar that rewrites one line (bytes, rate, ETA). If
	// false, plain lines: one at every 10% and at least every Every.
	Terminal bool
	// Color colours the bar; ignored without Terminal. ForTerminal clears it
	// when NO_COLOR is set.
	Color bool
	// Every is the longest gap between plain lines while bytes arrive. If
	// zero, 5s.
	Every time.Duration
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

// ForTerminal returns Options for w: a coloured bar when w is a terminal
// (colour off when $NO_COLOR is set, per no-color.org, or TERM=dumb), plain
// lines otherwise.
func ForTerminal(w io.Writer, getenv func(string) string) Options {
	if getenv == nil {
		getenv = os.Getenv
	}
	o := Options{Out: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && getenv("TERM") != "dumb" {
		o.Terminal = true
		o.Color = getenv("NO_COLOR") == ""
	}
	return o
}

// Reporter is fed the bytes of one download and closed at its end. Close
// with the download's error (nil on success) writes the last line.
type Reporter interface {
	io.Writer
	Close(err error)
}

// New starts a report on a download called what of total bytes (total <= 0:
// unknown).
func New(o Options, what string, total int64) Reporter {
	if o.Out == nil {
		o.Out = os.Stderr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Every <= 0 {
		o.Every = 5 * time.Second
	}
	if o.Terminal {
		return newBar(o, what, total)
	}
	now := o.Now()
	l := &lines{o: o, what: what, total: total, start: now, lastAt: now}
	fmt.Fprintf(o.Out, "%s: %s\n", what, sizeText(total))
	return l
}

func sizeText(total int64) string {
	if total <= 0 {
		return "downloading (size unknown)"
	}
	return "downloading " + mb(total)
}

// mb formats a byte count as megabytes with one decimal.
func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// lines is the plain report.
type lines struct {
	o           Options
	what        string
	total, done int64
	start       time.Time
	lastAt      time.Time
	lastTenth   int64
	mu          sync.Mutex
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done += int64(len(p))
	now := l.o.Now()
	tenth := int64(-1)
	if l.total > 0 {
		tenth = l.done * 10 / l.total
	}
	if l.total > 0 && l.done >= l.total {
		return len(p), nil // Close says "done"
	}
	if tenth > l.lastTenth || now.Sub(l.lastAt) >= l.o.Every {
		if tenth >= 0 {
			l.lastTenth = tenth
		}
		l.lastAt = now
		fmt.Fprintf(l.o.Out, "%s: %s\n", l.what, l.line(now))
	}
	return len(p), nil
}

// line is "40% 60.0/150.0 MB, 12.3 MB/s, ETA 7s" (without a known total:
// "60.0 MB, 12.3 MB/s").
func (l *lines) line(now time.Time) string {
	el := now.Sub(l.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(l.done) / el
	}
	if l.total <= 0 {
		return fmt.Sprintf("%s, %.1f MB/s", mb(l.done), rate/1e6)
	}
	eta := "unknown"
	if rate > 0 {
		eta = time.Duration(float64(l.total-l.done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("%d%% %.1f/%s, %.1f MB/s, ETA %s", l.done*100/l.total, float64(l.done)/1e6, mb(l.total), rate/1e6, eta)
}

func (l *lines) Close(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	took := l.o.Now().Sub(l.start).Round(100 * time.Millisecond)
	if err != nil {
		fmt.Fprintf(l.o.Out, "%s: stopped after %s in %s\n", l.what, mb(l.done), took)
		return
	}
	fmt.Fprintf(l.o.Out, "%s: done, %s in %s\n", l.what, mb(l.done), took)
}

// bar is the terminal report.
type bar struct {
	b    *progressbar.ProgressBar
	out  io.Writer
	what string
}

func newBar(o Options, what string, total int64) *bar {
	if total <= 0 {
		total = -1 // a spinner with bytes and rate
	}
	theme := progressbar.Theme{Saucer: "=", SaucerHead: ">", SaucerPadding: " ", BarStart: "[", BarEnd: "]"}
	if o.Color {
		theme.Saucer, theme.SaucerHead = "[green]=[reset]", "[green]>[reset]"
	}
	b := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(o.Out),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionEnableColorCodes(o.Color),
		progressbar.OptionSetTheme(theme),
	)
	return &bar{b: b, out: o.Out, what: what}
}

func (b *bar) Write(p []byte) (int, error) { return b.b.Write(p) }

func (b *bar) Close(err error) {
	if err != nil {
		_ = b.b.Exit() // leaves the bar where it stopped
		fmt.Fprintln(b.out)
		return
	}
	_ = b.b.Finish()
	fmt.Fprintln(b.out)
}
