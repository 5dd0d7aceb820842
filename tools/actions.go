package tools

import (
	"fmt"
	"strings"

	"github.com/cloakmcp/cloakbrowser-mcp/session/page"
)

// actionsTools are the seed's interactions that upstream's defaults lack
// (--caps=interactions): scroll into view, set input files on an element,
// and arming the next file chooser or dialog before the action that opens
// it, so the action runs through instead of stopping at a modal state.
func actionsTools() []*Tool {
	act := tabOpts{snapshot: snapDiff}
	quiet := tabOpts{noPage: true}
	return []*Tool{
		{Def: optDef("browser_scroll_into_view", "Scroll into view", "Scroll the page until the element is visible", false,
			props{"element": elementProp, "target": targetProp}, "target"),
			Cap: "interactions", Aliases: refAlias, Handle: tabTool("browser_scroll_into_view", act, scrollIntoView)},
		{Def: optDef("browser_set_input_files", "Set input files", "Set the files of a file input element directly, without opening a file chooser. An empty paths list clears the input.", false,
			props{"element": elementProp, "target": targetProp, "paths": pStrings("The absolute paths to the files (under the working or output directory)")}, "target", "paths"),
			Cap: "interactions", Aliases: refAlias, Handle: tabTool("browser_set_input_files", act, setInputFiles)},
		{Def: optDef("browser_arm_file_chooser", "Arm the next file chooser", "Answer the next file chooser the current tab opens with these files (an empty list cancels it), so the click that opens it runs through without a modal state. Arming again replaces the earlier arming.", false,
			props{"paths": pStrings("The absolute paths to the files to choose (under the working or output directory)")}, "paths"),
			Cap: "interactions", Handle: tabTool("browser_arm_file_chooser", quiet, armFileChooser)},
		{Def: optDef("browser_arm_dialog", "Arm the next dialog", "Answer the next dialog (alert, confirm, prompt, beforeunload) the current tab opens, so the action that opens it runs through without a modal state. Arming again replaces the earlier arming.", false,
			props{"accept": pBool("Whether to accept the dialog."), "promptText": pStr("The text of the prompt in case of a prompt dialog.")}, "accept"),
			Cap: "interactions", Handle: tabTool("browser_arm_dialog", quiet, armDialog)},
	}
}

func scrollIntoView(c *tabCall) error {
	target := c.args.String("target", "")
	el, err := c.locateToAct(target)
	if err != nil {
		return err
	}
	if err := c.tab.Act(c.ctx, el.ScrollIntoView()); err != nil {
		return err
	}
	c.resp.Result("Scrolled %s into view", c.describe(target))
	return nil
}

// inputPaths reads every file an agent hands the page (tools/files.go).
func (c *tabCall) inputPaths(paths []string) ([]page.InputFile, error) {
	return c.inputFiles(paths)
}

func baseNames(files []page.InputFile) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

func setInputFiles(c *tabCall) error {
	paths, err := c.inputPaths(c.args.Strings("paths"))
	if err != nil {
		return err
	}
	target := c.args.String("target", "")
	el, err := c.locateToAct(target)
	if err != nil {
		return err
	}
	if err := c.tab.Act(c.ctx, el.SetInputFiles(paths)); err != nil {
		return err
	}
	if len(paths) == 0 {
		c.resp.Result("Cleared the files of %s", c.describe(target))
	} else {
		c.resp.Result("Set %d file(s) on %s: %s", len(paths), c.describe(target), baseNames(paths))
	}
	return nil
}

func armFileChooser(c *tabCall) error {
	paths, err := c.inputPaths(c.args.Strings("paths"))
	if err != nil {
		return err
	}
	tab := c.tab
	tab.ArmFileChooser(paths, func(err error) {
		switch {
		case err != nil:
			tab.AddEvent("Armed file chooser failed: " + friendlyError(err))
		case len(paths) == 0:
			// Intercepted and left alone: the input keeps its files.
			tab.AddEvent("File chooser cancelled (armed by browser_arm_file_chooser)")
		default:
			tab.AddEvent(fmt.Sprintf("File chooser answered with %s (armed by browser_arm_file_chooser)", baseNames(paths)))
		}
	})
	if len(paths) == 0 {
		c.resp.Result("The next file chooser of this tab will be cancelled")
	} else {
		c.resp.Result("The next file chooser of this tab will get %s", baseNames(paths))
	}
	return nil
}

func armDialog(c *tabCall) error {
	accept := c.args.Bool("accept", false)
	hasText := c.args.Has("promptText")
	text := c.args.String("promptText", "")
	answer := page.DialogAnswer{Accept: accept}
	if accept && hasText {
		answer.PromptText = &text
	}
	tab := c.tab
	tab.ArmDialog(answer, func(d page.DialogInfo, err error) {
		verb := "dismissed"
		if accept {
			verb = "accepted"
		}
		desc := fmt.Sprintf("%q dialog with message %q", d.Type, d.Message)
		if err != nil {
			tab.AddEvent(fmt.Sprintf("Armed handling of the %s failed: %s", desc, friendlyError(err)))
			return
		}
		tab.AddEvent(fmt.Sprintf("The %s was %s (armed by browser_arm_dialog)", desc, verb))
	})
	verb := "dismissed"
	if accept {
		verb = "accepted"
	}
	c.resp.Result("The next dialog of this tab will be %s", verb)
	return nil
}
