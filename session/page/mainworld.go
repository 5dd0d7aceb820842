// The agent's functions (browser_evaluate), run in the page's own world
// over the tab's CDP session, without Playwright's evaluate.

package page

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mxschmitt/playwright-go"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// Playwright's evaluate compiles the agent's source with an eval inside
// its UtilityScript.evaluate, so every frame of the agent's function
// carries the origin "eval at evaluate (…)" in a stack the page reads: a
// tell no wrapper of the source can remove (detached, trampoline.go, takes
// away the frames Playwright calls it from, not that origin). Here the
// source is compiled by the DevTools protocol itself
// (Runtime.callFunctionOn, on the element for an element), which gives its
// frames no eval origin, no sourceURL and no name of ours, and the result
// is read by a serializer of ours (evalvalue.js) in the shape Playwright's
// takes, so the answer is the same. Nothing is added to the page's world:
// the function, the holder of its promise and its result are held by the
// session as remote objects of a group that is released after the call.
//
// Where this cannot run the call goes the old way, Playwright's evaluate
// with the detached wrapper: a source that is not one expression (a
// statement list, which Playwright's eval takes), an element in a frame or
// in a closed shadow root (handoff.go's take does not reach it), an element
// that is not there yet (Playwright's evaluate waits for it, and says why
// it is not there).

//go:embed evalvalue.js
var evalValueJS string

// errNotMainWorld means the call cannot run over the tab's CDP session;
// the caller takes Playwright's evaluate.
var errNotMainWorld = errors.New("not run in the main world over CDP")

// awaitChunk is how long one wait for the function's promise lasts.
const awaitChunk = time.Second

// releaseTimeout bounds the release of a call's remote objects.
const releaseTimeout = 5 * time.Second

// evalGroups names the object group of each call.
var evalGroups atomic.Uint64

// evalGroup names a new object group for the remote objects of one call;
// release lets them go.
func (t *Tab) evalGroup() (group string, release func()) {
	group = "e" + strconv.FormatUint(evalGroups.Add(1), 10)
	return group, func() {
		t.mu.Lock()
		s := t.cdpSess
		t.mu.Unlock()
		if s != nil {
			t.c.Go(func() {
				_, _ = sendCDP(context.Background(), s, releaseTimeout, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": group})
			})
		}
	}
}

// pageCall is the page's form of fn: it starts fn, called with no this
// and one undefined argument as Playwright's evaluate calls it (the inner
// function's this is the page's global object, which an arrow function
// in fn sees), and keeps the promise of its awaited value in the holder h.
func pageCall(fn string) string {
	return "function (h) { return h.p = (function () { return " + awaitedCall(fn, "undefined") + "; })(); }"
}

// elementCall is the element's form of fn, called on the element (this):
// fn(element, undefined), awaited; its promise is kept in the holder h.
func elementCall(fn string) string {
	return "function (h) { return h.p = " + awaitedCall(fn, "this, undefined") + "; }"
}

// awaitedCall is the promise of fn's awaited value: fn called with args
// when it is a function, else fn itself (a value or a promise).
func awaitedCall(fn, args string) string {
	return "(async () => { const f = (\n" + fn + "\n); return typeof f === 'function' ? await f(" + args + ") : await f; })()"
}

// holderExpr makes the holder of a call's promise: an object of the main
// world without a prototype (so no setter of the page's runs when the
// promise is kept in it), made by a literal (no function of the page's is
// called), that only the session holds.
const holderExpr = "({__proto__: null})"

// evaluateMain runs fn in the main world of the tab's main frame, or on
// the element of objectID (a remote object of the node's main world),
// and returns its value as Playwright's evaluate returns it. The remote
// objects it makes are in group (see evalGroup). It gives errNotMainWorld
// when fn is not one expression.
func (t *Tab) evaluateMain(ctx context.Context, op, group, objectID, fn string) (any, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	res, err := t.sendInChunks(ctx, op, s, "Runtime.evaluate", map[string]any{"expression": holderExpr, "objectGroup": group})
	if err != nil {
		return nil, err
	}
	holder, _ := res.(map[string]any)["result"].(map[string]any)["objectId"].(string)
	if holder == "" {
		return nil, &PageError{Op: op, Msg: "the page's world gave no object"}
	}
	// The call starts the function and waits for its promise in one
	// command, so a value the function gives at once comes back before
	// the page's next task (a long one the function set off with a zero
	// timer, say). That wait lasts one awaitChunk: a wait in flight when
	// the browser is lost is never answered (see sendCDP). A function
	// still running then has its promise taken from the holder and waited
	// for in commands of one awaitChunk each.
	target, src := holder, pageCall(fn)
	if objectID != "" {
		target, src = objectID, elementCall(fn)
	}
	res, err = watched(ctx, t, op, func() (any, error) {
		return sendCDP(ctx, s, awaitChunk, "Runtime.callFunctionOn", map[string]any{
			"objectId": target, "functionDeclaration": src, "arguments": []any{map[string]any{"objectId": holder}},
			"objectGroup": group, "userGesture": true, "awaitPromise": true,
		})
	})
	var te *TimeoutError
	if errors.As(err, &te) && ctx.Err() == nil && !t.c.isLost() {
		res, err = t.awaitHeld(ctx, op, s, group, holder)
	}
	if err != nil {
		return nil, err
	}
	m, _ := res.(map[string]any)
	if ex, ok := m["exceptionDetails"].(map[string]any); ok {
		perr := &PageError{Op: op, Msg: thrownText(ex)}
		if e, _ := ex["exception"].(map[string]any); e["className"] == "SyntaxError" {
			// The form's own, when it does not parse (then nothing ran);
			// the function's, when it does.
			if ok, cerr := t.Read(ctx, parsesScript, src); cerr == nil && ok == "no" {
				return nil, errNotMainWorld
			}
		}
		return nil, perr
	}
	r, _ := m["result"].(map[string]any)
	if v, done := remoteValue(r); done {
		return v, nil
	}
	id, _ := r["objectId"].(string)
	res, err = t.sendInChunks(ctx, op, s, "Runtime.callFunctionOn", map[string]any{
		"objectId": id, "functionDeclaration": evalValueJS, "returnByValue": true, "objectGroup": group,
	})
	if err != nil {
		return nil, err
	}
	m, _ = res.(map[string]any)
	if ex, ok := m["exceptionDetails"].(map[string]any); ok {
		return nil, &PageError{Op: op, Msg: "read the result: " + thrownText(ex)}
	}
	r, _ = m["result"].(map[string]any)
	return decodeValue(r["value"], map[float64]any{}), nil
}

// awaitHeld waits for the promise a call kept in holder, in commands of
// one awaitChunk each, until it settles, ctx ends or the browser is lost.
func (t *Tab) awaitHeld(ctx context.Context, op string, s playwright.CDPSession, group, holder string) (any, error) {
	res, err := t.sendInChunks(ctx, op, s, "Runtime.callFunctionOn", map[string]any{
		"objectId": holder, "functionDeclaration": "function () { return this.p; }", "objectGroup": group,
	})
	if err != nil {
		return nil, err
	}
	promise, _ := res.(map[string]any)["result"].(map[string]any)["objectId"].(string)
	if promise == "" {
		return nil, &PageError{Op: op, Msg: "the function's promise was not kept"}
	}
	return t.sendInChunks(ctx, op, s, "Runtime.awaitPromise", map[string]any{"promiseObjectId": promise})
}

// sendInChunks sends a command of a main-world call on s (through watched)
// in waits of one awaitChunk each, sent again while ctx lasts and the
// browser is not lost. A command in flight when the browser is lost is
// never answered (see sendCDP): one sent with ctx's deadline kept its
// goroutine waiting out the call's whole timeout (a page's long task can
// hold even a trivial command that long). A command sent again is one that
// only reads, or makes a holder the call's group releases.
func (t *Tab) sendInChunks(ctx context.Context, op string, s playwright.CDPSession, method string, params map[string]any) (any, error) {
	for {
		res, err := watched(ctx, t, op, func() (any, error) { return sendCDP(ctx, s, awaitChunk, method, params) })
		var te *TimeoutError
		if !errors.As(err, &te) || ctx.Err() != nil || t.c.isLost() {
			return res, err
		}
	}
}

// thrownText is the first line of what a function threw: an error's
// "Name: message", or the value thrown.
func thrownText(ex map[string]any) string {
	e, _ := ex["exception"].(map[string]any)
	switch {
	case e["description"] != nil && e["type"] == "object":
		return clip.FirstLine(fmt.Sprint(e["description"]))
	case e["value"] != nil:
		return clip.FirstLine(fmt.Sprint(e["value"]))
	case e["unserializableValue"] != nil:
		return fmt.Sprint(e["unserializableValue"])
	case e["description"] != nil:
		return clip.FirstLine(fmt.Sprint(e["description"]))
	}
	return clip.FirstLine(fmt.Sprint(ex["text"]))
}

// remoteValue is the value of a CDP RemoteObject that needs no reading in
// the page: a primitive (Playwright's reading of undefined, a function and
// a symbol is nil). done is false for an object.
func remoteValue(r map[string]any) (v any, done bool) {
	switch r["type"] {
	case "undefined", "function", "symbol":
		return nil, true
	case "object":
		if r["subtype"] == "null" {
			return nil, true
		}
		return nil, false
	}
	if u, ok := r["unserializableValue"].(string); ok {
		return unserializable(u), true
	}
	if f, ok := r["value"].(float64); ok {
		return number(f), true
	}
	return r["value"], true
}

// unserializable reads a CDP unserializableValue: NaN, ±Infinity, -0 or a
// bigint ("12n").
func unserializable(u string) any {
	switch u {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	case "-0":
		return math.Copysign(0, -1)
	}
	n, ok := new(big.Int).SetString(strings.TrimSuffix(u, "n"), 10)
	if !ok {
		return nil
	}
	return n
}

// decodeValue reads evalvalue.js's tree into the Go values Playwright's
// client gives for them: maps and slices (one value for an array or object
// the result holds twice, and one that holds itself), float64, string,
// bool, nil, *big.Int, *url.URL, time.Time; an error, a regexp and an
// ArrayBuffer as an empty map (what their JSON text is).
func decodeValue(v any, refs map[float64]any) any {
	m, ok := v.(map[string]any)
	if !ok {
		if f, ok := v.(float64); ok {
			return number(f)
		}
		return v
	}
	if s, ok := m["v"].(string); ok {
		switch s {
		case "NaN", "Infinity", "-Infinity", "-0":
			return unserializable(s)
		}
		return nil
	}
	if id, ok := m["ref"].(float64); ok {
		return refs[id]
	}
	if a, ok := m["a"].([]any); ok {
		refs[num(m["id"])] = a
		for i := range a {
			a[i] = decodeValue(a[i], refs)
		}
		return a
	}
	if o, ok := m["o"].([]any); ok {
		out := make(map[string]any, len(o))
		refs[num(m["id"])] = out
		for _, e := range o {
			kv, _ := e.(map[string]any)
			k, _ := kv["k"].(string)
			out[k] = decodeValue(kv["v"], refs)
		}
		return out
	}
	if s, ok := m["bi"].(string); ok {
		return unserializable(s)
	}
	if _, ok := m["d"]; ok {
		s, _ := m["d"].(string)
		d, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil // an invalid date, which JSON writes as null
		}
		return d
	}
	if s, ok := m["u"].(string); ok {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		return u
	}
	if ta, ok := m["ta"].(map[string]any); ok {
		return typedArray(ta)
	}
	return map[string]any{} // e, r, ab
}

func num(v any) float64 { f, _ := v.(float64); return f }

// number is a JSON number as Playwright's client gives it: an int when it
// is integral (and fits one), else the float64.
func number(f float64) any {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int(f)
	}
	return f
}

// typedArray is a typed array's elements: numbers, float32 for a
// Float32Array (so they print as it holds them), integers for the bigint
// kinds.
func typedArray(ta map[string]any) any {
	vs, _ := ta["v"].([]any)
	k, _ := ta["k"].(string)
	out := make([]any, len(vs))
	for i, x := range vs {
		switch k {
		case "f32":
			out[i] = float32(num(x))
		case "bi64", "bui64":
			s, _ := x.(string)
			out[i] = json.Number(s)
		case "f64":
			out[i] = x
		default:
			out[i] = number(num(x))
		}
	}
	return out
}
