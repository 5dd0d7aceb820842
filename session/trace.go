package session

// Trace is the state of a Playwright trace recorded in a generation
// (browser_start_tracing / browser_stop_tracing).
type Trace struct{}
