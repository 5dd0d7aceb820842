package session

// Routes are the request routes (mocks, header edits) installed in a
// generation (browser_route and friends).
type Routes struct{}
