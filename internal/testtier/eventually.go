package testtier

import (
	"testing"
	"time"
)

// pollEvery is how often Eventually and EventuallyState try their
// condition.
const pollEvery = 10 * time.Millisecond

// Eventually polls cond every 10 ms until it holds; if it has not held
// within the given time, t fails with "timed out after <within> waiting for
// <what>". cond is tried once even when within is 0. Call it from the
// test's goroutine only (it calls t.Fatalf).
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyState(t, within, what, func() (bool, string) { return cond(), "" })
}

// EventuallyState is Eventually for a cond that also says what it saw:
// the failure message ends with the last round's state ("timed out after
// <within> waiting for <what>; last: <state>").
func EventuallyState(t testing.TB, within time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state == "" {
				t.Fatalf("timed out after %v waiting for %s", within, what)
			} else {
				t.Fatalf("timed out after %v waiting for %s; last: %s", within, what, state)
			}
			return // a testing.TB whose Fatalf returns (this package's test)
		}
		time.Sleep(pollEvery)
	}
}
