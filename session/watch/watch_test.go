package watch

import (
	"encoding/json"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/testtier"
)

// TestScriptIsOneFunction checks that the embedded watch.js is the async
// function of (mark, afterAction, part) that Expression calls, and that node
// parses the expression (when node is installed).
func TestScriptIsOneFunction(t *testing.T) {
	if !strings.HasPrefix(script, "(async function read(mark, afterAction, part) {") || !strings.HasSuffix(strings.TrimSpace(script), "})") {
		t.Fatalf("watch.js is not one parenthesized async function of (mark, afterAction, part):\n%.80s … %s", script, script[len(script)-20:])
	}
	expr := Expression(true, false, nil)
	if !strings.HasSuffix(expr, "})(true, false, null)") {
		t.Fatalf("Expression ends %q", expr[len(expr)-20:])
	}
	if e := Expression(true, false, &Part{Since: 12, Event: "ev1"}); !strings.HasSuffix(e, `})(true, false, {"since":12,"ev":"ev1"})`) {
		t.Fatalf("Expression with a part ends %q", e[len(e)-40:])
	}
	if testing.Short() {
		return // node's parse belongs to the browser tier: the unit tier starts no node
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js 20 (Debian: apt-get install nodejs); it runs the Playwright driver too")
	}
	// Parse only: new Function compiles without running.
	for _, e := range []string{expr, Call(true, false, nil), Call(false, true, &Part{Since: 3, Event: "x"})} {
		cmd := exec.Command(node, "-e", "new Function('return ' + require('fs').readFileSync(0, 'utf8'))")
		cmd.Stdin = strings.NewReader(e)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("node does not parse %.60s…: %v\n%s", e, err, out)
		}
	}
}

// TestDecodeTellsAWorldWithoutTheWatch: a Call's null (no watch kept in
// that world) is ErrNotInstalled, a read is decoded, an exception is an
// error of its own.
func TestDecodeTellsAWorldWithoutTheWatch(t *testing.T) {
	if _, err := Decode(map[string]any{"result": map[string]any{"type": "object", "subtype": "null", "value": nil}}); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("null: %v, want ErrNotInstalled", err)
	}
	r, err := Decode(map[string]any{"result": map[string]any{"type": "object", "value": map[string]any{"t": "Title", "b": 3.0, "m": 2.0}}})
	if err != nil || r.Title != "Title" || r.Base != 3 || r.Muts != 2 {
		t.Fatalf("read: %+v, %v", r, err)
	}
	_, err = Decode(map[string]any{"exceptionDetails": map[string]any{"text": "Uncaught"}})
	if err == nil || errors.Is(err, ErrNotInstalled) {
		t.Fatalf("exception: %v", err)
	}
}

// TestValueHashMatchesTheScript runs the script's own hash in node and
// compares it with ValueHash, which OnlyTyped compares against.
func TestValueHashMatchesTheScript(t *testing.T) {
	testtier.BrowserTier(t) // runs node
	m := regexp.MustCompile(`(?m)^\s*const hash = (s => \{.*\});$`).FindStringSubmatch(script)
	if m == nil {
		t.Fatal("watch.js has no one-line `const hash = s => {…};`")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js 20 (Debian: apt-get install nodejs)")
	}
	inputs := []string{"", "a", "hello world", "héllo", "日本語", "emoji 😀 pair", strings.Repeat("x", 1000)}
	in, _ := json.Marshal(inputs)
	cmd := exec.Command(node, "-e", "const hash = "+m[1]+"; console.log(JSON.stringify(JSON.parse(require('fs').readFileSync(0, 'utf8')).map(hash)))")
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node said %q: %v", out, err)
	}
	for i, s := range inputs {
		if want := ValueHash(s); got[i] != want {
			t.Errorf("hash(%.20q): script %s, ValueHash %s", s, got[i], want)
		}
	}
}

// TestDecode reads an answer of Runtime.evaluate as the tab gets it.
func TestDecode(t *testing.T) {
	v := ValueHash("typed")
	res := map[string]any{"result": map[string]any{"type": "object", "value": map[string]any{
		"t": "Title", "b": 3.0, "nb": 4.0, "c": 1.0, "v": v, "vf": true,
	}}}
	r, err := Decode(res)
	if err != nil {
		t.Fatal(err)
	}
	if r.Title != "Title" || r.Base != 3 || r.NewBase != 4 || !r.OnlyTyped(3, "typed") || r.OnlyTyped(3, "other") || r.SameAs(3) {
		t.Fatalf("decoded %+v", r)
	}
	if !(&Read{Base: 2}).SameAs(2) || (&Read{Base: 2}).SameAs(0) || (&Read{Base: 2, Muts: 1}).SameAs(2) {
		t.Fatal("SameAs: a quiet read at its base is the same, a read without base or with mutations is not")
	}
	if !(&Read{Base: 2, Focus: true, FocusHov: true}).ClickedOnly(2) || (&Read{Base: 2, Focus: true}).ClickedOnly(2) {
		t.Fatal("ClickedOnly: focus may move only to the element under the pointer")
	}
	_, err = Decode(map[string]any{"exceptionDetails": map[string]any{"text": "Uncaught\nmore"}})
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("an exception: %v", err)
	}
}

func TestParseTell(t *testing.T) {
	for _, c := range []struct {
		payload string
		want    Tell
		ok      bool
	}{
		{`{"f":7,"t":8,"n":"Inbox (3)"}`, Tell{From: 7, To: 8, Title: "Inbox (3)"}, true},
		{`{"f":7,"t":8,"n":""}`, Tell{From: 7, To: 8}, true},
		{`{"f":0,"t":8,"n":"x"}`, Tell{}, false}, // no base left
		{`{"f":8,"t":8,"n":"x"}`, Tell{}, false}, // bases only grow
		{`{"f":9,"t":8,"n":"x"}`, Tell{}, false},
		{`{"p":3008}`, Tell{Primed: 3008}, true}, // labels asked ahead of a walk
		{`{"p":0}`, Tell{}, false},
		{`{"f":7,"t":8,"p":5}`, Tell{}, false}, // one or the other
		{`7:8`, Tell{}, false},
		{``, Tell{}, false},
	} {
		got, ok := ParseTell(c.payload)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseTell(%q) = %+v, %v; want %+v, %v", c.payload, got, ok, c.want, c.ok)
		}
	}
}

// TestScriptCallsTheBinding: the binding the server adds is the one the
// script tells through.
func TestScriptCallsTheBinding(t *testing.T) {
	if !strings.Contains(script, "globalThis."+Binding+"(") {
		t.Errorf("watch.js does not call globalThis.%s", Binding)
	}
}
