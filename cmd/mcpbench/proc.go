package main

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/internal/proctree"
)

// markerEnv tags every process a server starts: the environment is
// inherited by the driver, the browser and its helpers, even the ones that
// detach (setsid) or are reparented to init, so proctree finds them all for
// memory accounting and for the final kill.
const markerEnv = "MCPBENCH_MARKER"

// procInfo is one process of a server's tree, classified.
type procInfo struct {
	proctree.Proc
	Browser bool `json:"browser"`
}

// memSplit is a server's resident memory split into browser processes and
// the rest.
type memSplit struct {
	BrowserRSSKB    int64 `json:"browser_rss_kb"`
	NonBrowserRSSKB int64 `json:"non_browser_rss_kb"`
	BrowserPSSKB    int64 `json:"browser_pss_kb"`
	NonBrowserPSSKB int64 `json:"non_browser_pss_kb"`
	// NonBrowserPeakKB sums each process's own peak RSS (VmHWM): the
	// peaks need not have come at the same moment.
	NonBrowserPeakKB int64      `json:"non_browser_peak_rss_kb"`
	BrowserCPUms     int64      `json:"browser_cpu_ms"`
	NonBrowserCPUms  int64      `json:"non_browser_cpu_ms"`
	Procs            []procInfo `json:"procs"`
}

// isBrowserExe reports whether an executable is a browser process:
// Chromium and the helpers it ships (chrome_crashpad_handler,
// headless_shell), which all live next to the browser binary.
func isBrowserExe(exe, comm string, browserDirs []string) bool {
	if exe != "" {
		for _, d := range browserDirs {
			if d != "" && filepath.Dir(exe) == d {
				return true
			}
		}
	}
	for _, s := range []string{filepath.Base(exe), comm} {
		s = strings.ToLower(s)
		if strings.HasPrefix(s, "chrom") || strings.HasPrefix(s, "chrome") || strings.Contains(s, "headless_shell") {
			return true
		}
	}
	return false
}

// classify marks browser processes (a browser executable, or anything
// started under one) and sums memory by class.
func classify(found []proctree.Proc, browserDirs []string) memSplit {
	procs := make([]procInfo, len(found))
	byPID := map[int]*procInfo{}
	for i := range found {
		procs[i].Proc = found[i]
		byPID[procs[i].PID] = &procs[i]
	}
	var browser func(p *procInfo, depth int) bool
	browser = func(p *procInfo, depth int) bool {
		if isBrowserExe(p.Exe, p.Comm, browserDirs) {
			return true
		}
		if parent, ok := byPID[p.PPID]; ok && depth < 64 {
			return browser(parent, depth+1)
		}
		return false
	}
	var m memSplit
	for i := range procs {
		p := &procs[i]
		p.Browser = browser(p, 0)
		if p.Browser {
			m.BrowserRSSKB += p.RSSKB
			m.BrowserPSSKB += p.PSSKB
			m.BrowserCPUms += p.CPUms
		} else {
			m.NonBrowserRSSKB += p.RSSKB
			m.NonBrowserPSSKB += p.PSSKB
			m.NonBrowserPeakKB += p.PeakRSSKB
			m.NonBrowserCPUms += p.CPUms
		}
	}
	sort.Slice(procs, func(i, j int) bool { return procs[i].PID < procs[j].PID })
	m.Procs = procs
	return m
}
