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
	var state string
	if Within(within, func() (ok bool) { ok, state = cond(); return ok }) {
		return
	}
	if state == "" {
		t.Fatalf("timed out after %v waiting for %s", within, what)
	} else {
		t.Fatalf("timed out after %v waiting for %s; last: %s", within, what, state)
	}
}

// Within polls cond every 10 ms until it holds or within has passed, and
// reports whether it held: Eventually for a test that goes on either way.
// cond is tried once even when within is 0.
func Within(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
}
