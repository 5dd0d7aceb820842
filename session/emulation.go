package session

// Emulation is what the server overrides on a tab through CDP (a device,
// locale, timezone); the overrides live as long as the tab.
type Emulation struct{}
