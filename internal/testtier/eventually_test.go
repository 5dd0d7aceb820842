package testtier

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fatalRecorder is a testing.TB whose Fatalf records the message and
// returns instead of ending the test.
type fatalRecorder struct {
	testing.TB
	fatals []string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}

func TestEventuallyHolds(t *testing.T) {
	r := &fatalRecorder{TB: t}
	n := 0
	Eventually(r, 5*time.Second, "the third try", func() bool { n++; return n == 3 })
	if n != 3 || len(r.fatals) != 0 {
		t.Fatalf("tries %d, fatals %q; want 3 tries and none", n, r.fatals)
	}
	// Tried once even with no time at all.
	n = 0
	EventuallyState(r, 0, "the first try", func() (bool, string) { n++; return true, "" })
	if n != 1 || len(r.fatals) != 0 {
		t.Fatalf("tries %d, fatals %q; want 1 try and none", n, r.fatals)
	}
}

func TestEventuallyTimesOut(t *testing.T) {
	const within = 50 * time.Millisecond
	r := &fatalRecorder{TB: t}
	n := 0
	start := time.Now()
	Eventually(r, within, "never", func() bool { n++; return false })
	if took := time.Since(start); took < within {
		t.Errorf("gave up after %v, before %v", took, within)
	}
	if want := "timed out after 50ms waiting for never"; len(r.fatals) != 1 || r.fatals[0] != want {
		t.Fatalf("fatals %q; want [%q]", r.fatals, want)
	}
	if n < 2 || n > 10 {
		t.Errorf("%d tries in %v, want about one each %v", n, within, pollEvery)
	}

	r.fatals = nil
	n = 0
	EventuallyState(r, within, "never", func() (bool, string) { n++; return false, fmt.Sprint("try ", n) })
	if len(r.fatals) != 1 || !strings.HasPrefix(r.fatals[0], "timed out after 50ms waiting for never; last: try ") ||
		!strings.HasSuffix(r.fatals[0], fmt.Sprint(" ", n)) {
		t.Fatalf("fatals %q; want one ending with the last state, try %d", r.fatals, n)
	}
}
