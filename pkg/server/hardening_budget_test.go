package server_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHardeningSessionLogBudgetPerPrincipal (issue 29, item 4): with
// --save-session and --output-max-size, each token's session log lives in
// that principal's own directory and evicts only there: B's log, grown far
// past the budget, never removes A's files or A's log.
func TestHardeningSessionLogBudgetPerPrincipal(t *testing.T) {
	p := twoPrincipals(t, "--save-session", "--output-max-size", "30000")
	a, b, out, dirA, dirB := p.a, p.b, p.out, p.dirA, p.dirB

	must(t, a.Client, "browser_evaluate", map[string]any{"function": "() => ({important: true})", "filename": "a-important.json"}, "Evaluation result")
	important := filepath.Join(dirA, "a-important.json")
	logsA, _ := filepath.Glob(filepath.Join(dirA, "session-*.md"))
	if _, err := os.Stat(important); err != nil || len(logsA) != 1 {
		t.Fatalf("A's file (%v) or A's session log (%v) is not in A's directory", err, logsA)
	}
	if shared, _ := filepath.Glob(filepath.Join(out, "session-*.md")); len(shared) != 0 {
		t.Fatalf("a session log landed in the shared output directory: %v", shared)
	}

	// B's log grows to about 50 KB: five answers of 10,000 characters.
	for range 5 {
		must(t, b.Client, "browser_evaluate", map[string]any{"function": "() => 'b'.repeat(10000)"}, "bbbb")
	}
	logsB, _ := filepath.Glob(filepath.Join(dirB, "session-*.md"))
	if len(logsB) != 1 {
		t.Fatalf("B's session log is not in B's directory: %v", logsB)
	}
	if st, err := os.Stat(logsB[0]); err != nil || st.Size() <= 30000 {
		t.Fatalf("B's log did not grow past the budget (%v, %v): the test proves nothing", st, err)
	}
	if _, err := os.Stat(important); err != nil {
		t.Fatalf("B's session log evicted A's a-important.json: %v", err)
	}
	if _, err := os.Stat(logsA[0]); err != nil {
		t.Fatalf("B's session log evicted A's session log: %v", err)
	}
	// A's own log does evict within A's directory: its oldest file goes.
	for range 4 {
		must(t, a.Client, "browser_evaluate", map[string]any{"function": "() => 'a'.repeat(10000)"}, "aaaa")
	}
	if _, err := os.Stat(important); err == nil {
		t.Fatal("A's log grew past A's budget and A's oldest file was kept")
	}
	if _, err := os.Stat(logsB[0]); err != nil {
		t.Fatalf("A's session log evicted B's session log: %v", err)
	}
}
