package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// TestWriteJSONAsMarshalIndent: writeJSON writes what json.MarshalIndent
// writes for the values Playwright returns, long strings included.
func TestWriteJSONAsMarshalIndent(t *testing.T) {
	long := strings.Repeat("a<b>&\u2028é😀\"\\\x01", jsonChunk/5) // multi-byte runes across chunk edges
	cases := map[string]any{
		"nil":          nil,
		"string":       "hi <there> & \"you\"",
		"long string":  long,
		"invalid utf8": strings.Repeat("x", jsonChunk-1) + "\xff\xfe" + strings.Repeat("y", jsonChunk),
		"number":       42.5,
		"bool":         true,
		"empty map":    map[string]any{},
		"nil map":      map[string]any(nil),
		"empty slice":  []any{},
		"nil slice":    []any(nil),
		"nested": map[string]any{
			"b": []any{1.0, "two", map[string]any{"z": nil, "a": []any{}}, []any{true, false}},
			"a": map[string]any{"x<": long[:100]},
			"":  "empty key",
		},
		"array of maps": []any{map[string]any{"k": 1.0}, map[string]any{}},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			if err := writeJSON(&got, v, ""); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Fatalf("writeJSON differs from MarshalIndent:\ngot  %.300q\nwant %.300q", got.String(), want)
			}
		})
	}
	var got strings.Builder
	_ = writeJSON(&got, []any{math.NaN(), math.Inf(1), math.Inf(-1)}, "")
	if got.String() != "[\n  NaN,\n  Infinity,\n  -Infinity\n]" {
		t.Fatalf("non-finite numbers: %q", got.String())
	}
}

// TestCapWriter: a capWriter keeps the first max characters and counts all.
func TestCapWriter(t *testing.T) {
	w := &capWriter{max: 5}
	for _, s := range []string{"ab", "cdéfg", "hij"} {
		w.Write([]byte(s))
	}
	if w.buf.String() != "abcdé" || w.chars != int64(utf8.RuneCountInString("abcdéfghij")) {
		t.Fatalf("kept %q, counted %d", w.buf.String(), w.chars)
	}
}

// TestWriteJSONCycle: a result that holds itself (an object or an array
// with a reference to itself, as Playwright returns `o.self = o`) ends with
// errCycle instead of exhausting the stack; a value shared by two fields
// is no cycle.
func TestWriteJSONCycle(t *testing.T) {
	obj := map[string]any{"n": 1.0}
	obj["self"] = obj
	arr := make([]any, 2)
	arr[0], arr[1] = "x", map[string]any{"back": arr}
	shared := map[string]any{"k": "v"}
	for name, tc := range map[string]struct {
		v    any
		want error
	}{
		"object":   {obj, errCycle},
		"array":    {arr, errCycle},
		"nested":   {[]any{map[string]any{"a": obj}}, errCycle},
		"shared":   {map[string]any{"a": shared, "b": []any{shared, shared}}, nil},
		"no cycle": {map[string]any{"a": []any{1.0}}, nil},
	} {
		t.Run(name, func(t *testing.T) {
			var got strings.Builder
			if err := writeJSON(&got, tc.v, ""); !errors.Is(err, tc.want) {
				t.Fatalf("writeJSON: %v, want %v", err, tc.want)
			}
		})
	}
}

// TestRanOutOfTime: browser_evaluate_with_timeout stops the script when
// its call ran out of time, whichever answered first: ctx's deadline, or
// the driver's own timeout (ours plus a grace), which on a loaded machine
// can come before ctx's timer has run. An error of the page's is its own.
func TestRanOutOfTime(t *testing.T) {
	live, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	expired, cancel2 := context.WithTimeout(t.Context(), time.Nanosecond)
	defer cancel2()
	<-expired.Done()
	driverTimeout := fmt.Errorf("evaluate: %w", &page.TimeoutError{Op: "evaluate", Msg: "Timeout 549ms exceeded.", Err: errors.New("timeout")})
	thrown := &page.PageError{Op: "evaluate", Msg: "Error: boom"}
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"the driver's timeout before ctx's timer ran", live, driverTimeout, true},
		{"ctx's deadline", live, fmt.Errorf("evaluate: %w", context.DeadlineExceeded), true},
		{"any error once ctx expired", expired, thrown, true},
		{"the page's own error", live, thrown, false},
		{"no error", expired, nil, false},
	} {
		if got := ranOutOfTime(c.ctx, c.err); got != c.want {
			t.Errorf("%s: ranOutOfTime = %v, want %v", c.name, got, c.want)
		}
	}
}
