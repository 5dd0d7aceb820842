package proctree

import "testing"

const fakeStatus = `Name:	chromium
Umask:	0022
State:	S (sleeping)
Pid:	4242
PPid:	4200
VmPeak:	 34567890 kB
VmRSS:	   123456 kB
RssAnon:	    45678 kB
Threads:	12
`

func TestParseStatusKB(t *testing.T) {
	cases := []struct {
		name, text, key string
		want            int64
		ok              bool
	}{
		{"VmRSS", fakeStatus, "VmRSS", 123456, true},
		{"key prefix is not a match", fakeStatus, "VmRS", 0, false},
		{"missing", "Name:\tnode\n", "VmRSS", 0, false},
		{"kernel thread has no VmRSS", "Name:\tkthreadd\nState:\tS\n", "VmRSS", 0, false},
		{"smaps_rollup Pss", "00400000-7ffd [rollup]\nRss:     2048 kB\nPss:      777 kB\n", "Pss", 777, true},
		{"MB unit", "VmRSS:\t2 MB\n", "VmRSS", 2048, true},
		{"garbage value", "VmRSS:\tlots kB\n", "VmRSS", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseStatusKB(tc.text, tc.key)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("parseStatusKB(%q) = %d, %v; want %d, %v", tc.key, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	cases := []struct {
		name, text string
		want       procStat
		err        bool
	}{
		{"full line", "4242 (node) S 4200 4242 4200 0 -1 4194560 9120 0 0 0 153 47 0 0 20 0 11 0 3417 1171", procStat{"node", "S", 4200, 200, 3417}, false},
		{"comm with spaces and parens", "77 (Chrome_ChildIOT (x)) R 1 77 77 0 -1 0 0 0 0 0 5 6 0", procStat{"Chrome_ChildIOT (x)", "R", 1, 11, 0}, false},
		{"short line has no CPU", "9 (chromium) Z 8 9 9", procStat{"chromium", "Z", 8, 0, 0}, false},
		{"malformed", "garbage", procStat{}, true},
		{"bad ppid", "9 (x) S y 1", procStat{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat(tc.text)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err == nil && got != tc.want {
				t.Fatalf("parseStat = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestEnvironHas(t *testing.T) {
	env := []byte("PATH=/usr/bin\x00MCPBENCH_MARKER=abc/ours/1\x00HOME=/root\x00")
	if !environHas(env, "MCPBENCH_MARKER=abc/ours/1") {
		t.Error("marker not found")
	}
	if environHas(env, "MCPBENCH_MARKER=abc/ours/11") || environHas(env, "MCPBENCH_MARKER=abc/ours/") {
		t.Error("a different marker matched")
	}
}

func TestBelongs(t *testing.T) {
	all := map[int]Proc{
		10: {PID: 10, PPID: 5},  // server (marked)
		11: {PID: 11, PPID: 10}, // node driver (marked)
		12: {PID: 12, PPID: 11}, // chromium (marked)
		13: {PID: 13, PPID: 12}, // zygote: scrubbed environment
		14: {PID: 14, PPID: 13}, // renderer
		15: {PID: 15, PPID: 1},  // crashpad, reparented (marked)
		20: {PID: 20, PPID: 1},  // someone else's
		21: {PID: 21, PPID: 20},
		5:  {PID: 5, PPID: 1}, // the harness
	}
	marked := map[int]bool{10: true, 11: true, 12: true, 15: true}
	for pid, want := range map[int]bool{10: true, 11: true, 12: true, 13: true, 14: true, 15: true, 20: false, 21: false, 5: false, 99: false} {
		if got := belongs(pid, all, marked); got != want {
			t.Errorf("belongs(%d) = %v, want %v", pid, got, want)
		}
	}
}
