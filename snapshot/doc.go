// Package snapshot turns a page's accessibility information into the text an
// agent reads: AI, ARIA and Role snapshots with short refs, filters, budgets,
// stats and diffs, plus the per-target ref cache.
//
// Tools call it after they have fetched raw data from the browser; it is pure
// Go and imports nothing else of this module.
//
// # One tree, three modes
//
// Every snapshot is a [Tree] of [Node] lines in Playwright's format (a YAML
// list, two spaces per level):
//
//	# the AI snapshot of a page
//	- main [ref=e2]:
//	  - heading "Lab page" [level=1] [ref=e3]
//	  - link "Other page" [ref=e7] [cursor=pointer]:
//	    - /url: /other
//	  - textbox "Name" [ref=e15]: initial value
//	  - text: free text
//
// The three modes differ in where the tree comes from and how refs resolve:
//
//   - AI: [Parse] reads the text of Playwright's page.ariaSnapshot({mode:"ai"});
//     refs e12 and f1e3 resolve with Playwright's aria-ref= selector.
//     Render(Parse(s)) == s for any s.
//   - ARIA: [FromAXTree] renders Chromium's full accessibility tree with refs
//     ax1, ax2…; [Tree.Backend] gives the DOM node a ref stands for.
//   - Role: [RoleTree] builds an AI-like tree from the accessibility tree with
//     refs r1, r2…; [Tree.RoleRef] gives the getByRole arguments of a ref.
//
// [ClassifyRef] tells the three ref shapes apart.
//
// # Filters, budgets, diffs
//
// [Tree.Interactive], [Tree.Compact], [Tree.MaxDepth], [Tree.Query] and
// [Tree.Subtree] return new trees. [Tree.Stats] and [TextStats] count lines,
// characters and refs; [Truncate] cuts a rendering to a character budget.
// [Diff] shows what changed between two snapshots of a page, and [RefCache]
// keeps the last refs of each browser target.
package snapshot
