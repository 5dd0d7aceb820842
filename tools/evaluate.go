package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// evaluateTimeout bounds a browser_evaluate call; the script may keep running
// in the page after that, but the agent gets its answer.
const evaluateTimeout = 30 * time.Second

func evaluateTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_evaluate"), Cap: "core", Aliases: refAlias, Handle: tabTool("browser_evaluate", tabOpts{snapshot: snapDiff}, evaluate)},
		{Def: upstreamDef("browser_run_code_unsafe"), Cap: "core", Handle: runCodeUnsafe},
	}
}

func evaluate(c *tabCall) error {
	fn, el, err := c.evalArgs()
	if err != nil {
		return err
	}
	var locator string
	if el != nil {
		// The code's locator is read before the function runs: a function
		// that leaves the page busy (a long task it set off with a timer)
		// would hold that read, and the answer, for as long.
		locator = c.tsLocator(el, c.args.String("target", ""))
	}
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	ctx, cancel := context.WithTimeout(c.ctx, evaluateTimeout)
	defer cancel()
	v, err := c.evaluateOn(ctx, el, fn)
	var te *page.TimeoutError
	switch {
	case errors.Is(err, page.ErrModal):
		c.resp.Result("The script opened a dialog; handle it with browser_handle_dialog")
		return nil
	case errors.As(err, &te) && c.ctx.Err() == nil:
		return fmt.Errorf("the function did not finish within %v; it may still be running in the page", evaluateTimeout)
	case err != nil:
		return fmt.Errorf("evaluate: %s", friendlyError(err))
	}
	expr := fn
	if !codegen.IsFunction(fn) {
		expr = "() => (" + fn + ")"
	}
	if el != nil {
		c.code("await " + locator + ".evaluate(" + codegen.Quote(expr) + ");")
	} else {
		c.code("await page.evaluate(" + codegen.Quote(expr) + ");")
	}
	if err := c.evalResult(v); err != nil {
		return err
	}
	c.settle(nav, seq)
	return nil
}

// MaxEvaluateChars bounds the result an evaluate answer shows: its JSON text
// (as json.MarshalIndent writes it) is cut there, and the answer says how
// long the whole is. With filename the whole result goes to the file.
const MaxEvaluateChars = 40000

// evalResult reports an evaluation's result v: saved whole to the file the
// agent named (a resource of its session), or shown up to
// MaxEvaluateChars. v is encoded as it is written, piece by piece, so no
// second whole copy of a huge result is held: an answer cut from a 100 MB
// string keeps 40,000 characters of it.
func (c *tabCall) evalResult(v any) error {
	if name := c.args.String("filename", ""); name != "" {
		p, err := c.writeOutputFrom(name, "evaluate", ".json", func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			if err := writeJSON(bw, v, ""); err != nil {
				return err
			}
			return bw.Flush()
		})
		if err != nil {
			return err
		}
		c.resp.Result("- [Evaluation result](%s)", c.env.link(p))
		return nil
	}
	w := &capWriter{max: MaxEvaluateChars}
	if err := writeJSON(w, v, ""); err != nil { // a capWriter never fails: a cycle
		return err
	}
	c.resp.ResultText(w.buf.String())
	if w.chars > MaxEvaluateChars {
		c.resp.Result("[Result cut: it is %d characters of JSON, the first %d are shown. Pass filename to browser_evaluate to save all of it as a file]", w.chars, MaxEvaluateChars)
	}
	return nil
}

// capWriter keeps the first max characters written to it and counts them
// all.
type capWriter struct {
	buf   strings.Builder
	max   int64
	chars int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := int64(utf8.RuneCount(p))
	if room := w.max - w.chars; room > 0 {
		if n <= room {
			w.buf.Write(p)
		} else {
			w.buf.WriteString(clip.Prefix(string(p), int(room)))
		}
	}
	w.chars += n
	return len(p), nil
}

// jsonChunk is how much of a long string writeJSON escapes at a time.
const jsonChunk = 32 << 10

// writeJSON writes v, a value Playwright returned (maps, slices, strings,
// numbers, booleans, nil), as json.MarshalIndent(v, indent, "  ") would,
// without building it whole: objects and arrays element by element, long
// strings a chunk at a time. NaN and ±Infinity, which JSON lacks, are
// written as JavaScript spells them.
func writeJSON(w io.Writer, v any, indent string) error {
	return writeJSONOn(w, v, indent, map[unsafe.Pointer]bool{})
}

// errCycle says a result refers to itself: Playwright returns a JavaScript
// object graph with a cycle as Go maps and slices that hold themselves.
var errCycle = errors.New("the result refers to itself (a cycle): return a value without cycles, e.g. only the fields you need")

// writeJSONOn is writeJSON with the maps and slices on the way to v, so
// a cycle ends with errCycle instead of recursing until the stack is gone.
func writeJSONOn(w io.Writer, v any, indent string, path map[unsafe.Pointer]bool) error {
	var err error
	enter := func(p unsafe.Pointer) bool {
		if path[p] {
			err = errCycle
			return false
		}
		path[p] = true
		return true
	}
	put := func(s string) {
		if err == nil {
			_, err = io.WriteString(w, s)
		}
	}
	inner := indent + "  "
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			put("null")
			break
		}
		if len(x) == 0 {
			put("{}")
			break
		}
		p := reflect.ValueOf(x).UnsafePointer()
		if !enter(p) {
			break
		}
		defer delete(path, p)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		put("{\n")
		for i, k := range keys {
			kb, _ := json.Marshal(k)
			put(inner)
			put(string(kb))
			put(": ")
			if err == nil {
				err = writeJSONOn(w, x[k], inner, path)
			}
			if i < len(keys)-1 {
				put(",")
			}
			put("\n")
		}
		put(indent + "}")
	case []any:
		if x == nil {
			put("null")
			break
		}
		if len(x) == 0 {
			put("[]")
			break
		}
		p := unsafe.Pointer(unsafe.SliceData(x))
		if !enter(p) {
			break
		}
		defer delete(path, p)
		put("[\n")
		for i, e := range x {
			put(inner)
			if err == nil {
				err = writeJSONOn(w, e, inner, path)
			}
			if i < len(x)-1 {
				put(",")
			}
			put("\n")
		}
		put(indent + "]")
	case string:
		if len(x) <= jsonChunk {
			b, _ := json.Marshal(x)
			put(string(b))
			break
		}
		put(`"`)
		for len(x) > 0 && err == nil {
			n := min(jsonChunk, len(x))
			for n < len(x) && !utf8.RuneStart(x[n]) {
				n++
			}
			b, _ := json.Marshal(x[:n])
			put(string(b[1 : len(b)-1]))
			x = x[n:]
		}
		put(`"`)
	case *url.URL:
		// Upstream prints JSON.stringify's: a URL's toJSON is its href.
		b, _ := json.Marshal(x.String())
		put(string(b))
	case *regexp.Regexp:
		put("{}") // JSON.stringify of a RegExp, as upstream prints it
	case float64:
		switch {
		case math.IsNaN(x):
			put("NaN")
		case math.IsInf(x, 1):
			put("Infinity")
		case math.IsInf(x, -1):
			put("-Infinity")
		default:
			b, _ := json.Marshal(x)
			put(string(b))
		}
	default:
		b, merr := json.MarshalIndent(x, indent, "  ")
		if merr != nil {
			b = []byte(fmt.Sprint(x))
		}
		put(string(b))
	}
	return err
}

// runCodeUnsafe refuses: upstream runs the snippet with a Node Playwright
// `page` object in its own process (RCE-equivalent). This server has no Node
// runtime for tools and will not pretend; browser_evaluate runs JavaScript in
// the page instead.
func runCodeUnsafe(_ context.Context, _ *Env, _ Args) *Response {
	return (&Response{}).Error("browser_run_code_unsafe is not supported by cloakbrowser-mcp: it would run arbitrary code in the server process. " +
		"Use browser_evaluate to run JavaScript in the page, and the browser_* tools for Playwright actions.")
}

// evalArgs reads the function and optional target of the evaluate tools.
func (c *tabCall) evalArgs() (string, *page.Element, error) {
	fn := strings.TrimSpace(c.args.String("function", ""))
	if fn == "" {
		return "", nil, fmt.Errorf("function is empty: pass e.g. () => document.title")
	}
	if t := c.args.String("target", ""); t != "" {
		el, err := c.locate(t)
		return fn, el, err
	}
	return fn, nil, nil
}

// evaluateOn runs fn on the element, or on the page when el is nil.
func (c *tabCall) evaluateOn(ctx context.Context, el *page.Element, fn string) (any, error) {
	if el != nil {
		return el.Evaluate(ctx, fn, nil)
	}
	return c.tab.Evaluate(ctx, fn)
}
