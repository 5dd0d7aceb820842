package session

import "context"

// ReadWatch reads the tab's watch (for tests in session_test).
func ReadWatch(ctx context.Context, t *Tab, mark, afterAction bool) error {
	_, err := t.readWatch(ctx, mark, afterAction)
	return err
}

// RoundTrip is Tab.roundTrip (for tests in session_test).
func RoundTrip(ctx context.Context, t *Tab) { t.roundTrip(ctx) }

// RawAISnapshot is Playwright's AI snapshot alone (for tests).
func RawAISnapshot(t *Tab) (string, error) {
	return t.p.AriaSnapshot(SnapshotOptions{}.page(context.Background()))
}
