//go:build linux

package main

import (
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
