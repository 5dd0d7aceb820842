package tools

import (
	"fmt"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

func modalTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_handle_dialog"), Cap: "core", Handle: tabTool("browser_handle_dialog", tabOpts{clearsModal: "dialog", snapshot: snapDiff}, handleDialog)},
		{Def: upstreamDef("browser_file_upload"), Cap: "core", Handle: tabTool("browser_file_upload", tabOpts{clearsModal: "filechooser", snapshot: snapDiff}, fileUpload)},
	}
}

func handleDialog(c *tabCall) error {
	m := c.tab.Modals()[0]
	accept := c.args.Bool("accept", false)
	answer := page.DialogAnswer{Accept: accept}
	if accept && c.args.Has("promptText") {
		text := c.args.String("promptText", "")
		answer.PromptText = &text
	}
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	if err := c.tab.AnswerDialog(c.ctx, m, answer); err != nil {
		return fmt.Errorf("handle dialog: %w", err)
	}
	verb := "Dismissed"
	if accept {
		verb = "Accepted"
	}
	c.resp.Result("%s the %s", verb, m.Description)
	c.tab.Settle(c.ctx, nav, seq)
	return nil
}

func fileUpload(c *tabCall) error {
	m := c.tab.Modals()[0]
	// Read through the allowed roots; on error the chooser stays open so
	// the agent can retry.
	clean, err := c.inputFiles(c.args.Strings("paths"))
	if err != nil {
		return err
	}
	paths := "undefined" // upstream's JSON.stringify of no paths
	if c.args.Has("paths") {
		paths = codegen.JSON(c.args.Strings("paths"))
	}
	c.code("await fileChooser.setFiles(" + paths + ")") // upstream's line, without a semicolon
	nav, seq := c.tab.LastNavSeq(), c.tab.Seq()
	if err := c.tab.ChooseFiles(c.ctx, m, clean); err != nil {
		return fmt.Errorf("set files: %w", err)
	}
	if len(clean) == 0 {
		c.resp.Result("Cancelled the file chooser")
		return nil
	}
	c.resp.Result("Uploaded %d file(s)", len(clean))
	c.tab.Settle(c.ctx, nav, seq)
	return nil
}
