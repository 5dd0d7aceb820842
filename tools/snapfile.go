package tools

import "fmt"

// setSnapshotFile is the Snapshot section of --snapshot-mode full, as
// upstream 0.0.83 answers in its default mode: the page's whole snapshot
// goes to an output file (page-{timestamp}.yml, secrets redacted as in
// every file upstream writes) and the section is one link to it,
// "- [Snapshot](path)". An agent opens the file when it needs the page.
// A file that cannot be written leaves the snapshot inline, with why.
func (c *tabCall) setSnapshotFile(text string) {
	data := text
	if s := c.env.Output.Secrets; s != nil {
		data = s.Redact(data)
	}
	p, err := c.writeOutput("", "page", ".yml", []byte(data))
	if err != nil {
		c.resp.AddEvent("- Snapshot file not written (" + friendlyError(err) + "): the snapshot is inline")
		c.resp.SetSnapshot(fence("yaml", text))
		return
	}
	c.resp.SetSnapshot(fmt.Sprintf("- [Snapshot](%s)", c.env.link(p)))
}
