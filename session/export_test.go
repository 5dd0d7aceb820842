package session

// SetAfterInternalPortPick sets a hook run after a launch's internal
// DevTools port is picked, before the browser starts on it; nil removes it.
func SetAfterInternalPortPick(f func(port int)) { afterInternalPortPick = f }

// PipeUserAgent is pipeUserAgent: the user agent a headless start of
// binary sends, read over a DevTools pipe of our own.
var PipeUserAgent = pipeUserAgent
