package page

import (
	"context"
	"fmt"
	"time"

	"github.com/mxschmitt/playwright-go"
)

// Answering the dialogs and file choosers that block a page. These calls
// run while the page is blocked, so a modal state does not end them.

// AnswerDialog answers the dialog of the modal state m and clears the state,
// also when the answer fails (the dialog cannot be answered twice).
func (t *Tab) AnswerDialog(ctx context.Context, m *ModalState, a DialogAnswer) error {
	defer t.clearModal(m)
	if m.dialog == nil {
		return fmt.Errorf("the modal state is a %s, not a dialog", m.Kind)
	}
	return t.answerDialog(ctx, m.dialog, a)
}

// ChooseFiles clears the modal state m, a file chooser, and answers it with
// files (read by the caller); no files leaves the chooser unanswered
// (cancelled).
func (t *Tab) ChooseFiles(ctx context.Context, m *ModalState, paths []InputFile) error {
	t.clearModal(m)
	if len(paths) == 0 {
		return nil
	}
	if m.fileChooser == nil {
		return fmt.Errorf("the modal state is a %s, not a file chooser", m.Kind)
	}
	return t.setChooserFiles(ctx, m.fileChooser, paths)
}

func (t *Tab) answerDialog(ctx context.Context, d playwright.Dialog, a DialogAnswer) error {
	if !a.Accept {
		return run(ctx, t.c, "dismiss the dialog", stopOn{}, func() error { return d.Dismiss() })
	}
	return run(ctx, t.c, "accept the dialog", stopOn{}, func() error {
		if a.PromptText != nil {
			return d.Accept(*a.PromptText)
		}
		return d.Accept()
	})
}

func (t *Tab) setChooserFiles(ctx context.Context, fc playwright.FileChooser, files []InputFile) error {
	p := payloads(files)
	return run(ctx, t.c, "set the chosen files", stopOn{}, func() error { return fc.SetFiles(p) })
}

// modalWait is how long WaitModal waits for a modal state to open.
const modalWait = time.Second

// WaitModal returns the open modal states, waiting up to a second for one
// to open when none is: a page that opens dialogs in a loop opens the
// next one just after the last was answered, and a tool that handles it
// must not answer "no dialog" in between.
func (t *Tab) WaitModal(ctx context.Context) []*ModalState {
	if ms := t.Modals(); len(ms) > 0 {
		return ms
	}
	ctx, cancel := context.WithTimeout(ctx, modalWait)
	defer cancel()
	select {
	case <-t.ModalOpened():
	case <-t.crashCh:
	case <-t.c.env.Lost:
	case <-ctx.Done():
	}
	return t.Modals()
}
