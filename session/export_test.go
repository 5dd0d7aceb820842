package session

// SetAfterInternalPortPick sets a hook run after a launch's internal
// DevTools port is picked, before the browser starts on it; nil removes it.
func SetAfterInternalPortPick(f func(port int)) { afterInternalPortPick = f }
