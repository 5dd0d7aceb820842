package driver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

var errBadStat = errors.New("unreadable /proc stat")

// stat is what is read from /proc/<pid>/stat.
type stat struct {
	ppid   int
	start  uint64 // clock ticks after boot (field 22)
	exited bool   // a zombie not yet reaped
}

func readStat(pid string) (stat, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return stat{}, err
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// fields after its closing parenthesis. f[0] is field 3, the state.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, errBadStat
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return stat{}, errBadStat
	}
	ppid, err1 := strconv.Atoi(f[1])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return stat{}, errBadStat
	}
	return stat{ppid: ppid, start: start, exited: f[0] == "Z" || f[0] == "X"}, nil
}

var bootID = sync.OnceValue(func() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
})

var pidNS = sync.OnceValue(func() string {
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return ns
})

var self = sync.OnceValues(func() (Owner, error) {
	pid := os.Getpid()
	st, err := readStat(strconv.Itoa(pid))
	if err != nil {
		return Owner{}, fmt.Errorf("read this process's start time: %w", err)
	}
	return Owner{PID: pid, Start: st.start, Boot: bootID(), PIDNS: pidNS()}, nil
})

func selfOwner() (Owner, error) { return self() }

// Alive reports whether o's process still runs: the same PID, started at
// the same time in this boot, and not exited. When that cannot be told (an
// owner in another PID namespace, /proc unreadable for another reason than
// the process being gone), it reports true: a directory is kept rather than
// taken from a live owner.
func (o Owner) Alive() bool {
	if b := bootID(); o.Boot != "" && b != "" && o.Boot != b {
		return false
	}
	if ns := pidNS(); o.PIDNS != ns || ns == "" {
		return true
	}
	st, err := readStat(strconv.Itoa(o.PID))
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ESRCH)
	}
	return !st.exited && st.start == o.Start
}

func fileUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// PIDsUsing lists the live processes of this user, other than this one,
// that use dir, and their descendants: processes whose TMPDIR is dir or
// below it (a driver given dir as its private TMPDIR, and the browser it
// launched), or with a command-line argument naming a path there (a
// browser's --user-data-dir); descendants cover helpers started with a
// scrubbed environment.
func PIDsUsing(dir string) []int {
	var pids []int
	for _, p := range procsUsing(dir) {
		pids = append(pids, p.pid)
	}
	return pids
}

// proc is a process as seen in one scan of /proc: its PID and start time
// together name it across PID reuse.
type proc struct {
	pid   int
	start uint64
}

func procsUsing(dir string) []proc {
	dir = filepath.Clean(dir)
	if !filepath.IsAbs(dir) || dir == "/" {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	me, uid := os.Getpid(), os.Getuid()
	type info struct {
		proc
		ppid  int
		using bool
	}
	all := map[int]info{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == me {
			continue
		}
		fi, err := os.Stat("/proc/" + e.Name())
		if err != nil {
			continue
		}
		if u, ok := fileUID(fi); !ok || u != uid {
			continue
		}
		st, err := readStat(e.Name())
		if err != nil || st.exited {
			continue
		}
		all[pid] = info{proc{pid, st.start}, st.ppid, usesDir(e.Name(), dir)}
	}
	// A process uses dir if it or an ancestor does; the depth bound guards
	// against a cycle read from a changing /proc.
	uses := func(p info) bool {
		for range 64 {
			if p.using {
				return true
			}
			var ok bool
			if p, ok = all[p.ppid]; !ok {
				return false
			}
		}
		return false
	}
	var out []proc
	for _, p := range all {
		if uses(p) {
			out = append(out, p.proc)
		}
	}
	return out
}

// usesDir reports whether process pid itself uses dir (see PIDsUsing).
func usesDir(pid, dir string) bool {
	if cmd, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil {
		for _, arg := range bytes.Split(cmd, []byte{0}) {
			a := string(arg)
			if under(a, dir) {
				return true
			}
			if _, v, ok := strings.Cut(a, "="); ok && under(v, dir) {
				return true
			}
		}
	}
	if env, err := os.ReadFile("/proc/" + pid + "/environ"); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("TMPDIR=")); ok && under(filepath.Clean(string(v)), dir) {
				return true
			}
		}
	}
	return false
}

func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// KillUsing SIGKILLs every process PIDsUsing(dir) finds, again until none
// is left or wait has passed, and returns those still alive then.
func KillUsing(dir string, wait time.Duration) []int {
	deadline := time.Now().Add(wait)
	for {
		procs := procsUsing(dir)
		if len(procs) == 0 || time.Now().After(deadline) {
			var left []int
			for _, p := range procs {
				left = append(left, p.pid)
			}
			return left
		}
		for _, p := range procs {
			p.kill()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill SIGKILLs p if it is still the process the scan saw. The pidfd pins
// the process between that check and the signal, so a PID reused since the
// scan is never killed.
func (p proc) kill() {
	same := func() bool {
		st, err := readStat(strconv.Itoa(p.pid))
		return err == nil && st.start == p.start
	}
	fd, err := unix.PidfdOpen(p.pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil { // no pidfd (kernel before 5.3, seccomp)
		if same() {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		return
	}
	defer unix.Close(fd)
	if same() {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
	}
}

// privateTempDir makes the driver's TMPDIR, marked as this process's.
func privateTempDir() (string, error) {
	// Short: Chromium's socket paths under it must stay under ~107 bytes.
	dir, err := os.MkdirTemp("", TempPrefix+"d")
	if err != nil {
		return "", fmt.Errorf("create the driver's temp dir: %w", err)
	}
	if err := MarkOwned(dir); err != nil {
		_ = os.Remove(dir)
		return "", err
	}
	return dir, nil
}

// pdeathsigWrapper is setpriv (util-linux 2.33 or newer) when it can arm a
// parent-death signal before it execs, else "".
var pdeathsigWrapper = sync.OnceValue(func() string {
	p, err := exec.LookPath("setpriv")
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, p, "--help").Output()
	if !bytes.Contains(out, []byte("--pdeathsig")) {
		return ""
	}
	return p
})
