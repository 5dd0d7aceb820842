package tools

import (
	"fmt"

	"github.com/cloakmcp/cloakbrowser-mcp/codegen"
)

// pdfTools is upstream's --caps=pdf tool.
func pdfTools() []*Tool {
	return []*Tool{
		{Def: upstreamDef("browser_pdf_save"),
			Cap: "pdf", Handle: tabTool("browser_pdf_save", tabOpts{noPage: true}, pdfSave)},
	}
}

func pdfSave(c *tabCall) error {
	// The name is checked before the page is printed.
	a, err := c.env.filesOf(c.sess)
	if err != nil {
		return err
	}
	defer a.Close()
	name := c.args.String("filename", "")
	if _, _, err := a.Resolve(name, "page", ".pdf"); err != nil {
		return err
	}
	data, err := c.tab.PDF(c.ctx)
	if err != nil {
		return fmt.Errorf("save PDF: %w (PDF needs a headless browser)", err)
	}
	p, err := a.Write(name, "page", ".pdf", data)
	if err != nil {
		return err
	}
	c.resp.Result("- [Page as pdf](%s) (%d bytes)", c.env.link(p), len(data))
	c.code("await page.pdf(" + codegen.FormatObject(codegen.Object{"path": c.env.link(p)}, false) + ");")
	c.publish(p, "PDF")
	return nil
}
