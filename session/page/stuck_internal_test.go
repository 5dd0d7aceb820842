package page

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestChurning: churnDocs new documents within churnWindow make a page
// churning, and wake the calls watching for it; fewer, or older ones, do
// not; a navigation of ours starts the count again.
func TestChurning(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name string
		ages []time.Duration // how long ago each document committed, oldest first
		want bool
	}{
		{"none", nil, false},
		{"one short", []time.Duration{40, 30, 20, 10}, false},
		{"five quick ones", []time.Duration{50, 40, 30, 20, 10}, true},
		{"five over too long", []time.Duration{churnWindow + time.Second, 40, 30, 20, 10}, false},
		{"an old one, then five quick ones", []time.Duration{time.Minute, 50, 40, 30, 20, 10}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := &Tab{}
			woken := tab.churned()
			for _, age := range tc.ages {
				if age < time.Second {
					age *= time.Millisecond
				}
				tab.mu.Lock()
				tab.docTimes = append(tab.docTimes, now.Add(-age))
				tab.docTimes = tab.docTimes[max(0, len(tab.docTimes)-churnDocs):]
				tab.mu.Unlock()
			}
			if got := tab.churning(); got != tc.want {
				t.Fatalf("churning() = %v, want %v", got, tc.want)
			}
			// The last document committed through the tab's bookkeeping.
			tab.mu.Lock()
			if n := len(tab.docTimes); n > 0 {
				tab.docTimes = tab.docTimes[:n-1]
			}
			tab.noteDocLocked()
			tab.mu.Unlock()
			select {
			case <-woken:
				if !tc.want {
					t.Fatal("woken, but not churning")
				}
			default:
				if tc.want {
					t.Fatal("churning, but the watchers were not woken")
				}
			}
			tab.resetChurn()
			if tab.churning() {
				t.Fatal("still churning after a navigation of ours")
			}
		})
	}
}

// TestClassifyKeepsStuckErrors: the door passes its own sentinels through.
func TestClassifyKeepsStuckErrors(t *testing.T) {
	for _, sentinel := range []error{ErrCrashed, ErrSelfNavigating, ErrNotResponding} {
		err := classify("snapshot", fmt.Errorf("snapshot: %w", sentinel), false)
		if !errors.Is(err, sentinel) {
			t.Errorf("classify(%v) = %v", sentinel, err)
		}
	}
}

// TestDocsStateLeaveWorst: docs/tools.md ("No page stalls a call") states
// the worst case of leaving a stuck page that these constants make.
func TestDocsStateLeaveWorst(t *testing.T) {
	readme, err := os.ReadFile("../../docs/tools.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("Worst case about %d s before the replacement", int(leaveWorst.Round(time.Second).Seconds()))
	if !strings.Contains(strings.Join(strings.Fields(string(readme)), " "), want) {
		t.Fatalf("docs/tools.md does not say %q (leaveWorst is %s)", want, leaveWorst)
	}
}
