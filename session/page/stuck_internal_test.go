package page

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestHistoryTrapped: a page that goes back and forth between its own
// URLs, quickly and still, is a history trap; a router or a scroll spy
// that only pushes new URLs, a slow one, or one that stopped is not; a
// navigation of ours starts the count again.
func TestHistoryTrapped(t *testing.T) {
	type nav struct {
		ms  time.Duration // how long ago, in milliseconds
		url string
	}
	back := []nav{{50, "/t"}, {40, "/t#trap"}, {30, "/t"}, {20, "/t#trap"}, {10, "/t"}}
	for _, tc := range []struct {
		name string
		navs []nav
		want bool
	}{
		{"none", nil, false},
		{"back and forth", back, true},
		{"a router pushing new URLs", []nav{{50, "/a"}, {40, "/b"}, {30, "/c"}, {20, "/d"}, {10, "/e"}}, false},
		{"too few", back[1:], false},
		{"over too long", append([]nav{{1200, "/t#x"}}, back[1:]...), false},
		{"a carousel cycling its fragments", []nav{{1600, "#1"}, {1200, "#2"}, {800, "#3"}, {400, "#1"}, {10, "#2"}}, false},
		{"stopped a while ago", []nav{{1500, "/t"}, {1400, "/t#trap"}, {1300, "/t"}, {1200, "/t#trap"}, {1100, "/t"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := &Tab{}
			now := time.Now()
			tab.mu.Lock()
			for _, n := range tc.navs {
				tab.noteSameDocLocked(n.url)
				tab.sameDoc[len(tab.sameDoc)-1].at = now.Add(-n.ms * time.Millisecond)
			}
			tab.mu.Unlock()
			if got := tab.historyTrapped(); got != tc.want {
				t.Fatalf("historyTrapped() = %v, want %v", got, tc.want)
			}
			tab.resetChurn()
			if tab.historyTrapped() {
				t.Fatal("still trapped after a navigation of ours")
			}
		})
	}
}

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
