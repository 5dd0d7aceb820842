package session

import "github.com/cloakmcp/cloakbrowser-mcp/session/page"

// WebMCP returns the current tab of the ready generation and what its page
// offers through WebMCP (Config.WebMCP), without launching a browser or
// calling it: nil and the zero list when there is no browser, no tab or
// WebMCP is off.
func (s *Session) WebMCP() (*page.Tab, page.WebMCPList) {
	if !s.cfg.WebMCP {
		return nil, page.WebMCPList{}
	}
	g := s.Current()
	if g == nil {
		return nil, page.WebMCPList{}
	}
	t := g.Selected()
	if t == nil || t.Closed() {
		return nil, page.WebMCPList{}
	}
	return t, t.WebMCPList()
}

// webmcpChanged tells Config.WebMCPChanged the current tab's list may have
// changed.
func (s *Session) webmcpChanged() {
	if s.cfg.WebMCP && s.cfg.WebMCPChanged != nil {
		s.cfg.WebMCPChanged(s.id)
	}
}
