package session

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/cloakmcp/cloakbrowser-mcp/pkg/cloakbrowser"
)

// TestReserveInternalPort: internal DevTools ports come from the ports
// Chromium keeps closed to pages; one this process holds, or another
// process listens on, is not picked; the session's last port is picked only
// when no other is free; and when none is free the error says so.
func TestReserveInternalPort(t *testing.T) {
	var held []int
	t.Cleanup(func() {
		for _, p := range held {
			releaseInternalPort(p)
		}
	})
	// Another process's listener on an internal port.
	var busy net.Listener
	for _, p := range cloakbrowser.InternalDevToolsPorts()[0] {
		if ln, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			busy = ln
			break
		}
	}
	if busy == nil {
		t.Fatal("every unprivileged internal DevTools port is in use on this machine")
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	seen := map[int]bool{}
	for {
		p, err := reserveInternalPort(0)
		if err != nil {
			if !errors.Is(err, ErrNoInternalPort) || !strings.Contains(err.Error(), "close a session with CDP") {
				t.Fatalf("exhausted: %v", err)
			}
			break
		}
		held = append(held, p)
		if !cloakbrowser.IsInternalDevToolsPort(p) || seen[p] || p == busyPort {
			t.Fatalf("picked %d (seen %v, busy %d)", p, seen[p], busyPort)
		}
		seen[p] = true
	}
	if len(held) == 0 {
		t.Fatal("no internal port reserved")
	}
	// With two free (of one tier), the one to avoid is not picked; alone, it is.
	if len(held) < 2 || held[1] < 1024 {
		t.Skip("fewer than two unprivileged internal ports are free on this machine")
	}
	a, b := held[0], held[1]
	releaseInternalPort(a)
	releaseInternalPort(b)
	held = held[2:]
	p, err := reserveInternalPort(a)
	if err != nil || p != b {
		t.Fatalf("avoiding %d of %d and %d: got %d, %v", a, a, b, p, err)
	}
	held = append(held, p)
	if p, err = reserveInternalPort(a); err != nil || p != a {
		t.Fatalf("only %d free: got %d, %v", a, p, err)
	}
	held = append(held, p)
}
