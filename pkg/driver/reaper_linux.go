package driver

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// reaperScript is the reaper (see startReaper), run by /bin/sh with the
// owner's pid and start time as $1 and $2. It reads, one a line, the
// directories the owner makes its temp dirs in, until its standard input
// ends, which only the owner holds open; then it removes every directory
// there named TempPrefix* that this user owns and whose owner marker names
// the owner, again every 0.2 s until all stayed gone for a second (a
// browser still dying may write its profile again), for 10 s at most. What
// is left then (a process that would not die) is the next server's sweep's.
const reaperScript = `pid=$1 start=$2
set --
while IFS= read -r r; do set -- "$@" "$r"; done
[ $# -gt 0 ] || exit 0
owned() {
  [ -d "$1" ] && [ ! -L "$1" ] && [ -O "$1" ] && [ -f "$1/` + OwnerFile + `" ] || return 1
  p= s=
  while IFS=' ' read -r k v; do
    case $k in pid) p=$v ;; start) s=$v ;; esac
  done <"$1/` + OwnerFile + `"
  [ "$p" = "$pid" ] && [ "$s" = "$start" ]
}
roots=$#
for r in "$@"; do
  for d in "$r"/` + TempPrefix + `*; do
    if owned "$d"; then set -- "$@" "$d"; fi
  done
done
shift $roots
[ $# -gt 0 ] || exit 0
quiet=0 n=0
while [ $quiet -lt 5 ] && [ $n -lt 50 ]; do
  n=$((n + 1)) gone=1
  for d in "$@"; do
    if [ -e "$d" ] || [ -L "$d" ]; then gone=0; rm -rf -- "$d" 2>/dev/null; fi
  done
  if [ $gone = 1 ]; then quiet=$((quiet + 1)); else quiet=0; fi
  sleep 0.2
done
`

// reaper is this process's reaper (startReaper): the write end of its
// standard input, kept open for this process's life, and the directories
// it was told of.
var reaper struct {
	once  sync.Once
	mu    sync.Mutex
	w     *os.File
	roots map[string]bool
}

// startReaper starts, once per process, a reaper of the temporary
// directories this process marks as its own (MarkOwned): a /bin/sh in a
// session of its own (a signal to this process's group does not reach it)
// whose standard input is a pipe only this process holds (close on exec:
// no driver or browser inherits it). When this process ends, however it
// ends (a SIGKILL, the OOM killer), the pipe ends, and the reaper removes
// the directories still marked as this process's, once the browser and the
// driver (killed by their parent-death signals) have let go of them; on a
// clean close they are gone already and it exits at once. Without /bin/sh
// nothing is started: the next server's sweep (SweepStale) removes them.
func startReaper() {
	reaper.once.Do(func() {
		self, err := SelfOwner()
		if err != nil {
			return
		}
		r, w, err := os.Pipe()
		if err != nil {
			return
		}
		defer r.Close()
		cmd := exec.Command("/bin/sh", "-c", reaperScript, "cloakbrowser-mcp-reaper",
			strconv.Itoa(self.PID), strconv.FormatUint(self.Start, 10))
		cmd.Stdin = r
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			w.Close()
			return
		}
		reaper.w, reaper.roots = w, map[string]bool{}
		// Not waited for: it ends after this process (its pipe's end), or
		// if killed, when it stays a zombie until this process ends.
		_ = cmd.Process.Release()
	})
}

// reapIn tells the reaper that this process makes its temp dirs in root.
func reapIn(root string) {
	startReaper()
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	if reaper.w == nil || reaper.roots[root] || strings.ContainsAny(root, "\n\x00") {
		return
	}
	if _, err := reaper.w.WriteString(root + "\n"); err == nil {
		reaper.roots[root] = true
	}
}
