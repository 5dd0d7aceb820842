// The agent's code in the page's own world, over the tab's CDP session:
// no Playwright frames (UtilityScript) in the stacks it can read.

package page

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/clip"
)

// funcLiteral matches the start of a function literal: function, async
// function, or an arrow with its parameters.
var funcLiteral = regexp.MustCompile(`^(async\s+)?function[\s*(]|^(async\s*)?(\([^()]*\)|[A-Za-z_$][\w$]*)\s*=>`)

// EvaluateMain runs the agent's function (or expression) in the page's
// main world over the tab's CDP session, with no source URL (its frames read
// as <anonymous>, as a console's), and returns its value as Evaluate
// would. A promise is waited for with short reads of its state rather
// than one DevTools call pending for as long; a read in flight when the
// browser is killed still stays (Playwright never answers it), so the
// tools do not call this yet (TestEvaluateMainBrowserKilled).
func (t *Tab) EvaluateMain(ctx context.Context, fn string) (any, error) {
	defer t.invalidateWatch()
	fn = strings.TrimSpace(fn)
	obj, err := t.mainCall(ctx, fn)
	if err != nil {
		return nil, err
	}
	if obj["subtype"] == "promise" {
		if obj, err = t.settle(ctx, obj); err != nil {
			return nil, err
		}
	}
	return t.mainValue(ctx, obj, true)
}

// mainCall calls fn, or evaluates it when it is no function literal (and
// calls the function it evaluates to, as Playwright does).
func (t *Tab) mainCall(ctx context.Context, fn string) (map[string]any, error) {
	deep := map[string]any{"serialization": "deep", "maxDepth": 1000}
	callFn := func() (any, error) {
		// The global object, with no property read: `this` at the top level.
		win, err := t.cdpMain(ctx, "Runtime.evaluate", map[string]any{"expression": "this"})
		if err != nil {
			return nil, err
		}
		id, _ := win["objectId"].(string)
		return t.cdpMain(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": fn + "\n", "objectId": id, "serializationOptions": deep})
	}
	if funcLiteral.MatchString(fn) {
		r, err := callFn()
		var pe *PageError
		if errors.As(err, &pe) && strings.HasPrefix(pe.Msg, "SyntaxError:") {
			// Worded as Playwright's evaluate words it: the text itself
			// compiled, not the call's wrapping of it.
			// A function literal that does not compile runs nothing.
			if _, cerr := t.cdpMain(ctx, "Runtime.evaluate", map[string]any{"expression": fn}); cerr != nil {
				return nil, cerr
			}
		}
		if err != nil {
			return nil, err
		}
		return r.(map[string]any), nil
	}
	r, err := t.cdpMain(ctx, "Runtime.evaluate", map[string]any{"expression": fn, "serializationOptions": deep})
	if err != nil {
		return nil, err
	}
	if r["type"] == "function" {
		v, err := callFn()
		if err != nil {
			return nil, err
		}
		return v.(map[string]any), nil
	}
	return r, nil
}

// cdpMain sends one command in the main world and returns its remote
// object; an exception the page's code threw is a *PageError.
func (t *Tab) cdpMain(ctx context.Context, method string, params map[string]any) (map[string]any, error) {
	s, err := t.cdpSession(ctx)
	if err != nil {
		return nil, err
	}
	res, err := call(ctx, t.c, "evaluate", stopOn{modal: t}, func() (any, error) { return s.Send(method, params) })
	if err != nil {
		return nil, err
	}
	m, _ := res.(map[string]any)
	if ex, ok := m["exceptionDetails"].(map[string]any); ok {
		return nil, &PageError{Op: "evaluate", Msg: thrown(ex), Err: errThrown}
	}
	r, _ := m["result"].(map[string]any)
	return r, nil
}

var errThrown = errors.New("the function threw")

// thrown is what the page threw, as Playwright words it: an Error's first
// line, or the value.
func thrown(ex map[string]any) string {
	e, _ := ex["exception"].(map[string]any)
	if e != nil {
		if v, ok := e["value"]; ok {
			return fmt.Sprint(v)
		}
		if d, ok := e["description"].(string); ok {
			return clip.FirstLine(d)
		}
	}
	text, _ := ex["text"].(string)
	return text
}

// settle waits for a promise, reading its state (no code of ours runs in
// the page), a little less often the longer it takes.
func (t *Tab) settle(ctx context.Context, p map[string]any) (map[string]any, error) {
	id, _ := p["objectId"].(string)
	wait := time.Millisecond
	for {
		props, err := t.CDP(ctx, "Runtime.getProperties", map[string]any{"objectId": id, "ownProperties": true})
		if err != nil {
			return nil, err
		}
		var state string
		var result map[string]any
		m, _ := props.(map[string]any)
		internal, _ := m["internalProperties"].([]any)
		for _, ip := range internal {
			ip, _ := ip.(map[string]any)
			switch ip["name"] {
			case "[[PromiseState]]":
				v, _ := ip["value"].(map[string]any)
				state, _ = v["value"].(string)
			case "[[PromiseResult]]":
				result, _ = ip["value"].(map[string]any)
			}
		}
		switch state {
		case "fulfilled":
			if result != nil && result["subtype"] == "promise" {
				p, id = result, result["objectId"].(string)
				continue
			}
			return result, nil
		case "rejected":
			return nil, &PageError{Op: "evaluate", Msg: rejection(result), Err: errThrown}
		case "pending":
		default:
			return nil, fmt.Errorf("evaluate: no state of the promise in %v", m)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctxErr("evaluate", ctx.Err())
		case <-t.c.env.Lost:
			timer.Stop()
			return nil, fmt.Errorf("evaluate: %w", ErrBrowserGone)
		case <-t.ModalOpened():
			timer.Stop()
			return nil, ErrModal
		case <-timer.C:
		}
		wait = min(2*wait, 64*time.Millisecond)
	}
}

// rejection is a rejected promise's reason, as thrown words it.
func rejection(r map[string]any) string {
	if r == nil {
		return "undefined"
	}
	if v, ok := r["value"]; ok {
		return fmt.Sprint(v)
	}
	d, _ := r["description"].(string)
	return clip.FirstLine(d)
}

// mainValue is the Go value of a remote object, as playwright-go returns
// an evaluation's: its deep serialization, read again when it lacks one.
func (t *Tab) mainValue(ctx context.Context, obj map[string]any, top bool) (any, error) {
	if obj == nil {
		return nil, nil
	}
	d, ok := obj["deepSerializedValue"].(map[string]any)
	if !ok {
		id, _ := obj["objectId"].(string)
		if id == "" {
			return fromDeep(map[string]any{"type": obj["type"], "value": primitive(obj)}, map[string]any{}, top), nil
		}
		r, err := t.cdpMain(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { return this }", "objectId": id,
			"serializationOptions": map[string]any{"serialization": "deep", "maxDepth": 1000}})
		if err != nil {
			return nil, err
		}
		if d, ok = r["deepSerializedValue"].(map[string]any); !ok {
			return nil, nil
		}
	}
	if d["type"] == "typedarray" {
		return t.typedArray(ctx, obj)
	}
	if id, _ := obj["objectId"].(string); top && obj["className"] == "URL" && id != "" {
		// Upstream prints a URL as its href (its toJSON).
		r, err := t.cdpMain(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { return this.href }", "objectId": id, "returnByValue": true})
		if err != nil {
			return nil, err
		}
		return r["value"], nil
	}
	return fromDeep(d, map[string]any{}, top), nil
}

// primitive is a remote primitive's value, unserializable ones spelled as
// deep serialization does.
func primitive(obj map[string]any) any {
	if u, ok := obj["unserializableValue"].(string); ok {
		return strings.TrimSuffix(u, "n")
	}
	return obj["value"]
}

// typedArray reads a typed array's elements by value.
func (t *Tab) typedArray(ctx context.Context, obj map[string]any) (any, error) {
	id, _ := obj["objectId"].(string)
	r, err := t.cdpMain(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { return this }", "objectId": id, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	m, _ := r["value"].(map[string]any)
	keys := make([]int, 0, len(m))
	for k := range m {
		if i, err := strconv.Atoi(k); err == nil {
			keys = append(keys, i)
		}
	}
	sort.Ints(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, number(m[strconv.Itoa(k)]))
	}
	return out, nil
}

// number is a JavaScript number as playwright-go returns it: an int when
// integral.
func number(v any) any {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) && math.Abs(x) < 1<<63 && !(x == 0 && math.Signbit(x)) {
			return int(x)
		}
		return x
	case string:
		switch x {
		case "NaN":
			return math.NaN()
		case "Infinity":
			return math.Inf(1)
		case "-Infinity":
			return math.Inf(-1)
		case "-0":
			return math.Copysign(0, -1)
		}
	}
	return v
}

// fromDeep converts a deep-serialized value; refs holds the objects seen
// by their internalId (a second sight is a reference).
func fromDeep(d map[string]any, refs map[string]any, top bool) any {
	var id string
	if n, ok := d["weakLocalObjectReference"].(float64); ok {
		id = strconv.FormatFloat(n, 'f', -1, 64)
	}
	if _, has := d["value"]; !has && id != "" {
		return refs[id]
	}
	switch d["type"] {
	case "undefined", "null", "symbol":
		return nil
	case "function":
		if top {
			return nil
		}
		return map[string]any{}
	case "string", "boolean":
		return d["value"]
	case "number":
		return number(d["value"])
	case "bigint":
		n := new(big.Int)
		s, _ := d["value"].(string)
		n.SetString(s, 10)
		return n
	case "date":
		s, _ := d["value"].(string)
		v, _ := time.Parse(time.RFC3339Nano, s)
		return v
	case "node":
		return "ref: <Node>"
	case "window":
		return "ref: <Window>"
	case "array":
		items, _ := d["value"].([]any)
		out := make([]any, len(items))
		if id != "" {
			refs[id] = out
		}
		for i, it := range items {
			m, _ := it.(map[string]any)
			out[i] = fromDeep(m, refs, false)
		}
		return out
	case "object":
		out := map[string]any{}
		if id != "" {
			refs[id] = out
		}
		entries, _ := d["value"].([]any)
		for _, e := range entries {
			kv, _ := e.([]any)
			if len(kv) != 2 {
				continue
			}
			k, ok := kv[0].(string)
			if !ok {
				continue
			}
			m, _ := kv[1].(map[string]any)
			out[k] = fromDeep(m, refs, false)
		}
		return out
	}
	return map[string]any{} // maps, sets, errors, regexps…: JSON.stringify's {}
}
