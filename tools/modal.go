package tools

import (
	"fmt"
)

func modalTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_handle_dialog"), Cap: "core", Handle: tabTool("browser_handle_dialog", tabOpts{clearsModal: "dialog", snapshot: snapDiff}, handleDialog)},
		{Def: upstreamDef("browser_file_upload"), Cap: "core", Handle: tabTool("browser_file_upload", tabOpts{clearsModal: "filechooser", snapshot: snapDiff}, fileUpload)},
	}
}

func handleDialog(c *tabCall) error {
	m := c.tab.Modals()[0]
	d := m.Dialog
	accept := c.args.Bool("accept", false)
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	var err error
	if accept {
		if c.args.Has("promptText") {
			err = d.Accept(c.args.String("promptText", ""))
		} else {
			err = d.Accept()
		}
	} else {
		err = d.Dismiss()
	}
	c.tab.ClearModal(m)
	if err != nil {
		return fmt.Errorf("handle dialog: %w", err)
	}
	verb := "Dismissed"
	if accept {
		verb = "Accepted"
	}
	c.resp.Result("%s the %s", verb, m.Description)
	c.settle(nav, seq)
	return nil
}

func fileUpload(c *tabCall) error {
	m := c.tab.Modals()[0]
	paths := c.args.Strings("paths")
	var clean []string
	for _, p := range paths {
		q, err := c.env.inputPath(p)
		if err != nil {
			// Leave the chooser open so the agent can retry.
			return err
		}
		clean = append(clean, q)
	}
	c.tab.ClearModal(m)
	if len(clean) == 0 {
		c.resp.Result("Cancelled the file chooser")
		return nil
	}
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	if err := m.FileChooser.SetFiles(clean); err != nil {
		return fmt.Errorf("set files: %w", err)
	}
	c.resp.Result("Uploaded %d file(s)", len(clean))
	c.settle(nav, seq)
	return nil
}
