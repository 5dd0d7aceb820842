package page

import (
	"context"

	"github.com/mxschmitt/playwright-go"
)

// Arming: a tab's next dialog or file chooser is answered as soon as it
// opens, so the action that opens it runs through instead of stopping at a
// modal state.

// DialogAnswer is how a dialog is answered.
type DialogAnswer struct {
	// Accept accepts the dialog; false dismisses it.
	Accept bool
	// PromptText is typed into a prompt when accepting; nil keeps the
	// prompt's default.
	PromptText *string
}

// DialogInfo describes a dialog.
type DialogInfo struct {
	// Type is "alert", "confirm", "prompt" or "beforeunload".
	Type    string
	Message string
}

// armed holds what is armed for a tab's next dialog and file chooser.
type armed struct {
	dialog  *armedDialog
	chooser *armedChooser
}

type armedDialog struct {
	answer DialogAnswer
	done   func(DialogInfo, error)
}

type armedChooser struct {
	paths []InputFile
	done  func(error)
}

func (t *Tab) armedLocked() *armed { return &t.armed }

// ArmDialog makes the tab's next dialog be answered with a instead of
// opening a modal state. It replaces an earlier arming. done, if not nil,
// is called once with the dialog and the outcome, on a goroutine the
// Context owns.
func (t *Tab) ArmDialog(a DialogAnswer, done func(DialogInfo, error)) {
	t.mu.Lock()
	t.armedLocked().dialog = &armedDialog{answer: a, done: done}
	t.mu.Unlock()
}

// ArmFileChooser makes the tab's next file chooser get files (read by the
// caller) instead of opening a modal state; no paths leaves it unanswered,
// so the input keeps its files. It replaces an earlier arming. done, if not
// nil, is called once with the outcome, on a goroutine the Context owns.
func (t *Tab) ArmFileChooser(files []InputFile, done func(error)) {
	t.mu.Lock()
	t.armedLocked().chooser = &armedChooser{paths: append([]InputFile(nil), files...), done: done}
	t.mu.Unlock()
}

// armedCtx bounds the answer to an armed dialog or chooser: nobody waits
// for it but the page.
func (t *Tab) armedCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), t.c.env.ActionTimeout)
}

// takeArmedDialog answers d as armed, if a dialog is armed, and disarms.
// It runs on Playwright's event goroutine, so the answer (a driver call)
// runs on a goroutine of the Context.
func (t *Tab) takeArmedDialog(d playwright.Dialog) bool {
	t.mu.Lock()
	a := t.armedLocked()
	ad := a.dialog
	a.dialog = nil
	t.mu.Unlock()
	if ad == nil {
		return false
	}
	t.c.Go(func() {
		ctx, cancel := t.armedCtx()
		defer cancel()
		err := t.answerDialog(ctx, d, ad.answer)
		if ad.done != nil {
			ad.done(DialogInfo{Type: d.Type(), Message: d.Message()}, err)
		}
	})
	return true
}

// takeArmedChooser answers fc as armed, if a chooser is armed, and
// disarms (as takeArmedDialog).
func (t *Tab) takeArmedChooser(fc playwright.FileChooser) bool {
	t.mu.Lock()
	a := t.armedLocked()
	ac := a.chooser
	a.chooser = nil
	t.mu.Unlock()
	if ac == nil {
		return false
	}
	t.c.Go(func() {
		var err error
		if len(ac.paths) > 0 {
			ctx, cancel := t.armedCtx()
			defer cancel()
			err = t.setChooserFiles(ctx, fc, ac.paths)
		}
		if ac.done != nil {
			ac.done(err)
		}
	})
	return true
}
