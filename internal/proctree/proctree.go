package proctree

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Proc is one live process of a server's tree.
type Proc struct {
	PID   int    `json:"pid"`
	PPID  int    `json:"ppid"`
	Comm  string `json:"comm"`
	Exe   string `json:"exe,omitempty"`
	State string `json:"state,omitempty"`
	RSSKB int64  `json:"rss_kb"`
	CPUms int64  `json:"cpu_ms"` // user+system time so far
	// Start is the start time in clock ticks since boot: with PID it
	// identifies a process across PID reuse.
	Start uint64 `json:"-"`
	PSSKB int64  `json:"pss_kb,omitempty"`
	// PeakRSSKB is the process's resident set at its largest so far
	// (VmHWM): unlike RSSKB, it does not depend on whether a garbage
	// collection came just before the sample.
	PeakRSSKB int64 `json:"peak_rss_kb,omitempty"`
}

// parseStatusKB returns the value in kB of a "Key:   123 kB" line of a
// /proc/<pid>/status or smaps_rollup text.
func parseStatusKB(text, key string) (int64, bool) {
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		k, v, ok := strings.Cut(line, ":")
		if !ok || k != key {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, false
		}
		if len(f) > 1 {
			switch strings.ToLower(f[1]) {
			case "kb":
			case "mb":
				n *= 1024
			case "gb":
				n *= 1024 * 1024
			}
		}
		return n, true
	}
	return 0, false
}

// procStat is what is read from /proc/<pid>/stat.
type procStat struct {
	Comm, State string
	PPID        int
	// Ticks is user+system CPU time in clock ticks (fields 14 and 15).
	Ticks int64
	// Start is the start time in clock ticks after boot (field 22).
	Start uint64
}

// parseStat parses /proc/<pid>/stat. comm is in parentheses and may itself
// contain spaces and parentheses, so fields are counted from the last ')'.
func parseStat(text string) (procStat, error) {
	open := strings.IndexByte(text, '(')
	closeIdx := strings.LastIndexByte(text, ')')
	if open < 0 || closeIdx < open {
		return procStat{}, fmt.Errorf("malformed stat %q", text)
	}
	st := procStat{Comm: text[open+1 : closeIdx]}
	f := strings.Fields(text[closeIdx+1:])
	if len(f) < 2 {
		return procStat{}, fmt.Errorf("malformed stat %q", text)
	}
	st.State = f[0]
	var err error
	if st.PPID, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("stat ppid %q: %w", f[1], err)
	}
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) >= 13 {
		u, err1 := strconv.ParseInt(f[11], 10, 64)
		s, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 == nil && err2 == nil {
			st.Ticks = u + s
		}
	}
	if len(f) >= 20 {
		st.Start, _ = strconv.ParseUint(f[19], 10, 64)
	}
	return st, nil
}

// environHas reports whether a NUL-separated environ block holds key=value.
func environHas(environ []byte, kv string) bool {
	for _, e := range bytes.Split(environ, []byte{0}) {
		if string(e) == kv {
			return true
		}
	}
	return false
}

// belongs reports whether pid is marked or descends from a marked process.
func belongs(pid int, all map[int]Proc, marked map[int]bool) bool {
	for range 64 {
		if marked[pid] {
			return true
		}
		p, ok := all[pid]
		if !ok || p.PPID == pid || p.PPID <= 1 {
			return false
		}
		pid = p.PPID
	}
	return false
}
