package session

import "github.com/mxschmitt/playwright-go"

// armed holds the handlers armed for a tab's next dialog and file chooser.
type armed struct {
	dialog  func(playwright.Dialog)
	chooser func(playwright.FileChooser)
}

func (t *Tab) armedLocked() *armed { return &t.armed }

// ArmDialog makes the tab's next dialog go to fn instead of opening a modal
// state, so an action that opens a dialog runs through. It replaces an
// earlier arming; nil disarms. fn runs on its own goroutine (it may call the
// driver) and once.
func (t *Tab) ArmDialog(fn func(playwright.Dialog)) {
	t.mu.Lock()
	t.armedLocked().dialog = fn
	t.mu.Unlock()
}

// ArmFileChooser is ArmDialog for the tab's next file chooser.
func (t *Tab) ArmFileChooser(fn func(playwright.FileChooser)) {
	t.mu.Lock()
	t.armedLocked().chooser = fn
	t.mu.Unlock()
}

// Armed reports what is armed on the tab.
func (t *Tab) Armed() (dialog, chooser bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.armedLocked()
	return a.dialog != nil, a.chooser != nil
}

// takeArmedDialog hands d to the armed handler, if any, and disarms it.
func (t *Tab) takeArmedDialog(d playwright.Dialog) bool {
	t.mu.Lock()
	a := t.armedLocked()
	fn := a.dialog
	a.dialog = nil
	t.mu.Unlock()
	if fn == nil {
		return false
	}
	go fn(d)
	return true
}

// takeArmedChooser hands fc to the armed handler, if any, and disarms it.
func (t *Tab) takeArmedChooser(fc playwright.FileChooser) bool {
	t.mu.Lock()
	a := t.armedLocked()
	fn := a.chooser
	a.chooser = nil
	t.mu.Unlock()
	if fn == nil {
		return false
	}
	go fn(fc)
	return true
}
