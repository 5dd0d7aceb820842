//go:build linux

package main

import (
	"os"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// TestCPUMeter: a process alive at the start counts what it used after; one
// born later counts whole; one that exits counts up to its last sample; a
// reused PID is another process.
func TestCPUMeter(t *testing.T) {
	const root = 10
	start := []proctree.Proc{
		{PID: root, Comm: "cloakbrowser-mc", CPUms: 500, Start: 1},
		{PID: 11, Comm: "node", CPUms: 2000, Start: 2},
		{PID: 12, Comm: "chromium", CPUms: 100, Start: 3},
	}
	m := newCPUMeter(root, start)
	m.sample([]proctree.Proc{
		{PID: root, Comm: "cloakbrowser-mc", CPUms: 700, Start: 1},
		{PID: 11, Comm: "node", CPUms: 2300, Start: 2},
		{PID: 12, Comm: "chromium", CPUms: 400, Start: 3},
		{PID: 13, Comm: "chromium", CPUms: 900, Start: 9}, // a renderer born during the run
	})
	m.sample([]proctree.Proc{ // 13 exited; 12 is now another process
		{PID: root, Comm: "cloakbrowser-mc", CPUms: 800, Start: 1},
		{PID: 11, Comm: "node", CPUms: 2400, Start: 2},
		{PID: 12, Comm: "chromium", CPUms: 50, Start: 20},
	})
	got := m.seconds()
	want := map[role]float64{roleServer: 0.3, roleDriver: 0.4, roleChromium: 0.3 + 0.9 + 0.05}
	for r, w := range want {
		if d := got[r] - w; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: %.3f CPU-s, want %.3f", r, got[r], w)
		}
	}
	// The meter above read the kinds of made-up PIDs: whatever they are,
	// the kinds add up to the chromium total.
	var sum float64
	for _, v := range m.chromiumSeconds() {
		sum += v
	}
	if d := sum - want[roleChromium]; d > 1e-9 || d < -1e-9 {
		t.Errorf("chromium by kind adds up to %.3f CPU-s, want %.3f", sum, want[roleChromium])
	}
}

// TestChromiumKinds: the browser's processes are told apart by kind, each
// process once (a PID reused by another kind is another process).
func TestChromiumKinds(t *testing.T) {
	const root = 10
	kinds := map[int]string{12: "browser", 13: "renderer", 14: "gpu-process", 15: "network", 16: "storage"}
	m := newCPUMeter(root, []proctree.Proc{{PID: root, Comm: "cloakbrowser-mc", Start: 1}})
	m.kindOf = func(pid int) string { return kinds[pid] }
	m.sample([]proctree.Proc{
		{PID: 12, Comm: "chromium", CPUms: 1000, Start: 3},
		{PID: 13, Comm: "chromium", CPUms: 3000, Start: 4},
		{PID: 14, Comm: "chromium", CPUms: 2000, Start: 5},
		{PID: 15, Comm: "chromium", CPUms: 500, Start: 6},
		{PID: 16, Comm: "chromium", CPUms: 100, Start: 7},
	})
	kinds[13] = "utility" // read once: a later sample does not reclassify 13
	m.sample([]proctree.Proc{{PID: 13, Comm: "chromium", CPUms: 3500, Start: 4}})
	got := m.chromiumSeconds()
	want := map[string]float64{"browser": 1, "renderer": 3.5, "gpu-process": 2, "network": 0.5, "other": 0.1}
	for k, w := range want {
		if d := got[k] - w; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s: %.3f CPU-s, want %.3f", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("kinds %v, want %v", got, want)
	}
}

// TestChromiumKindOfThisProcess reads a real command line: this test
// binary has no --type, so it reads as a browser's main process.
func TestChromiumKindOfThisProcess(t *testing.T) {
	if got := chromiumKind(os.Getpid()); got != "browser" {
		t.Fatalf("chromiumKind(self) = %q, want browser", got)
	}
	if got := chromiumKind(1 << 30); got != "" {
		t.Fatalf("chromiumKind of no process = %q, want \"\"", got)
	}
}

func TestRoleOf(t *testing.T) {
	cases := []struct {
		name string
		p    proctree.Proc
		want role
	}{
		{"our server", proctree.Proc{PID: 1, Comm: "cloakbrowser-mc"}, roleServer},
		{"upstream's node is its server", proctree.Proc{PID: 1, Comm: "node"}, roleServer},
		{"driver", proctree.Proc{PID: 2, Comm: "node"}, roleDriver},
		{"driver shim", proctree.Proc{PID: 3, Comm: "setpriv"}, roleDriver},
		{"browser", proctree.Proc{PID: 4, Comm: "chromium"}, roleChromium},
		{"renderer", proctree.Proc{PID: 5, Comm: "chrome_crashpad"}, roleChromium},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := roleOf(tc.p, 1); got != tc.want {
				t.Fatalf("%s", got)
			}
		})
	}
}

// TestDensityGoals: issue 28's 2× floor and issue 16's 3× goal are judged
// apart, and a p95 over 3 s misses.
func TestDensityGoals(t *testing.T) {
	res := func(loops int, navP95 float64) *densityResult {
		return &densityResult{modeResult: &modeResult{Loops: loops, Tools: map[string]*toolStats{
			"browser_navigate": {P95ms: navP95}, "browser_snapshot": {P95ms: 100}, "browser_click": {P95ms: 200},
		}}}
	}
	var b strings.Builder
	printDensityGoals(&b, res(250, 3500), res(100, 9000))
	out := b.String()
	for _, want := range []string{
		"rounds ≥ 2× upstream's (issue 28's floor): 2.50× — pass",
		"rounds ≥ 3× upstream's: 2.50× — miss",
		"browser_navigate p95 ≤ 3 s: 3500 ms — miss",
		"browser_click p95 ≤ 3 s: 200 ms — pass",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("goals lack %q:\n%s", want, out)
		}
	}
}
