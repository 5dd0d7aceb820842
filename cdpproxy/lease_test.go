package cdpproxy

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestParsePortRange checks the cdpproxy face of internal/portrange (whose
// own test has the full table): the package prefix, the quoted input, and
// that the range is usable as the leaser's.
func TestParsePortRange(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    PortRange
		wantErr string // substring; empty means success
	}{
		{name: "single", in: "9222", want: PortRange{First: 9222, Last: 9222}},
		{name: "range", in: " 9222-9230 ", want: PortRange{First: 9222, Last: 9230}},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "reversed", in: "9230-9222", wantErr: "reversed"},
		{name: "junk", in: "abc", wantErr: "not a decimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePortRange(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParsePortRange(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				if want := "cdpproxy: port range " + strconv.Quote(tt.in) + ": "; !strings.HasPrefix(err.Error(), want) {
					t.Errorf("error %q does not start with %q", err, want)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParsePortRange(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
			if got.Len() != tt.want.Last-tt.want.First+1 {
				t.Errorf("Len() = %d", got.Len())
			}
		})
	}
}

func TestNewLeaserErrors(t *testing.T) {
	tests := []struct {
		name, host, ports, want string
	}{
		{"empty host", "", "9222", "bind host is empty"},
		{"bad range", "127.0.0.1", "x", "not a decimal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewLeaser(tt.host, tt.ports); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewLeaser(%q, %q) error = %v; want %q", tt.host, tt.ports, err, tt.want)
			}
		})
	}
}

func newTestLeaser(t *testing.T, n int) (*Leaser, PortRange) {
	t.Helper()
	r := freeRange(t, n)
	l, err := NewLeaser("127.0.0.1", r.String())
	if err != nil {
		t.Fatal(err)
	}
	return l, r
}

func TestLeaseLowestPortFirst(t *testing.T) {
	l, r := newTestLeaser(t, 3)
	ctx := context.Background()
	var leases []*Lease
	for i := 0; i < 3; i++ {
		lease, err := l.Lease(ctx)
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
		leases = append(leases, lease)
		if want := r.First + i; lease.Port() != want {
			t.Fatalf("lease %d got port %d; want %d", i, lease.Port(), want)
		}
		if got := lease.Listener().Addr().(*net.TCPAddr).Port; got != lease.Port() {
			t.Fatalf("listener bound %d; lease says %d", got, lease.Port())
		}
	}
	t.Cleanup(func() {
		for _, lease := range leases {
			lease.Release()
		}
	})

	if _, err := l.Lease(ctx); !errors.Is(err, ErrLimit) {
		t.Fatalf("lease past the range: %v; want ErrLimit", err)
	}

	// Releasing the middle port makes it the lowest free one again.
	leases[1].Release()
	again, err := l.Lease(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leases = append(leases, again)
	if again.Port() != r.First+1 {
		t.Fatalf("re-lease got %d; want %d", again.Port(), r.First+1)
	}
}

func TestLeasePortHeldByAnotherProcess(t *testing.T) {
	l, r := newTestLeaser(t, 2)
	other, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.First)))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := l.Lease(context.Background())
	if !errors.Is(err, ErrPortInUse) {
		if lease != nil {
			lease.Release()
		}
		t.Fatalf("Lease with port %d held elsewhere: %v; want ErrPortInUse (and no skip to %d)", r.First, err, r.Last)
	}
	msg := err.Error()
	if !strings.Contains(msg, strconv.Itoa(r.First)) || !strings.Contains(msg, "in use") {
		t.Errorf("error %q does not say which port is in use", msg)
	}

	// Once the other holder leaves, the same lowest port is leased.
	_ = other.Close()
	lease, err = l.Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	if lease.Port() != r.First {
		t.Fatalf("got port %d; want %d", lease.Port(), r.First)
	}
}

func TestLeaseReleaseAndReLease(t *testing.T) {
	l, r := newTestLeaser(t, 1)
	lease, err := l.Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lease.Release()
	lease.Release() // idempotent

	// The port is really free: another listener can bind it, then not us.
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(r.First)))
	if err != nil {
		t.Fatalf("port not freed by Release: %v", err)
	}
	_ = ln.Close()

	again, err := l.Lease(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Release()
	if again.Port() != r.First {
		t.Fatalf("got %d; want %d", again.Port(), r.First)
	}
}

func TestLeaseCancelledContext(t *testing.T) {
	l, _ := newTestLeaser(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Lease(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lease(cancelled) = %v; want context.Canceled", err)
	}
	lease, err := l.Lease(context.Background())
	if err != nil {
		t.Fatalf("a cancelled lease kept its port: %v", err)
	}
	lease.Release()
}

func TestLeaseConcurrent(t *testing.T) {
	const n = 8
	l, r := newTestLeaser(t, n)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		leases []*Lease
		errs   []error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lease, err := l.Lease(context.Background())
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			leases = append(leases, lease)
		}()
	}
	wg.Wait()
	defer func() {
		for _, lease := range leases {
			lease.Release()
		}
	}()
	if len(errs) > 0 {
		t.Fatalf("concurrent leases failed: %v", errs)
	}
	seen := map[int]bool{}
	for _, lease := range leases {
		if seen[lease.Port()] {
			t.Fatalf("port %d leased twice", lease.Port())
		}
		if lease.Port() < r.First || lease.Port() > r.Last {
			t.Fatalf("port %d outside %s", lease.Port(), r)
		}
		seen[lease.Port()] = true
	}
	if len(seen) != n {
		t.Fatalf("%d unique ports; want %d", len(seen), n)
	}
}
