package main

import (
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

func TestClassify(t *testing.T) {
	procs := []proctree.Proc{
		{PID: 10, PPID: 1, Comm: "cloakbrowser-mc", Exe: "/tmp/x/cloakbrowser-mcp", RSSKB: 20 << 10, PSSKB: 18 << 10},
		{PID: 11, PPID: 10, Comm: "node", Exe: "/usr/bin/node", RSSKB: 140 << 10, PSSKB: 130 << 10},
		// Chromium runs detached (setsid) but is still our child here.
		{PID: 12, PPID: 11, Comm: "chromium", Exe: "/usr/lib/chromium/chromium", RSSKB: 100 << 10, PSSKB: 60 << 10},
		// A renderer whose comm is a thread-ish name: browser by ancestry.
		{PID: 13, PPID: 12, Comm: "Renderer", Exe: "/usr/lib/chromium/chromium", RSSKB: 80 << 10},
		{PID: 14, PPID: 13, Comm: "sh", Exe: "/bin/sh", RSSKB: 1 << 10},
		// Reparented to init: browser by its executable.
		{PID: 15, PPID: 1, Comm: "chrome_crashpad", Exe: "/usr/lib/chromium/chrome_crashpad_handler", RSSKB: 3 << 10},
		// CloakBrowser's own binary name, in a directory we were told about.
		{PID: 16, PPID: 11, Comm: "cloak", Exe: "/opt/cloak/cloak", RSSKB: 50 << 10},
	}
	m := classify(procs, []string{"/opt/cloak"})
	want := map[int]bool{10: false, 11: false, 12: true, 13: true, 14: true, 15: true, 16: true}
	for _, p := range m.Procs {
		if p.Browser != want[p.PID] {
			t.Errorf("pid %d (%s) browser = %v, want %v", p.PID, p.Comm, p.Browser, want[p.PID])
		}
	}
	if m.NonBrowserRSSKB != 160<<10 || m.BrowserRSSKB != 234<<10 {
		t.Errorf("rss split = %d / %d kB", m.NonBrowserRSSKB, m.BrowserRSSKB)
	}
	if m.NonBrowserPSSKB != 148<<10 || m.BrowserPSSKB != 60<<10 {
		t.Errorf("pss split = %d / %d kB", m.NonBrowserPSSKB, m.BrowserPSSKB)
	}
}
