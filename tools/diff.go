package tools

// addDiff sets the Snapshot section after an action.
func (c *tabCall) addDiff() {
	text, err := captureSnapshot(c.ctx, c.tab, snapshotRequest{})
	if err != nil {
		c.resp.AddEvent("- Snapshot unavailable: " + friendlyError(err))
		return
	}
	c.resp.SetSnapshot(fence("yaml", text))
}
