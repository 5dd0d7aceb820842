package server_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestEvaluateCyclicResult: a function that returns an object holding
// itself gets a short error, and the server lives on (it used to recurse
// until the stack was exhausted, which killed the process).
func TestEvaluateCyclicResult(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Cycle</title><p>cycle</p>`)
	}))
	defer srv.Close()
	c, _ := inProcess(t)
	must(t, c, "browser_navigate", map[string]any{"url": srv.URL}, "Cycle")
	fails(t, c, "browser_evaluate", map[string]any{"function": `() => { const o = {n: 1}; o.self = o; return o }`}, "the result refers to itself")
	must(t, c, "browser_evaluate", map[string]any{"function": `() => { const s = {k: 'v'}; return {a: s, b: [s, s]} }`}, `"k": "v"`)
}
