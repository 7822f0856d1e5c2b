package main

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/alecthomas/kong"
)

// A command's reference page (help/COMMAND.md) is the one source of what
// the command does, its examples and its JSON fields; kong's per-flag
// help (the struct tags) is the one source of its arguments and flags.
// Each is rendered into the other's place when pyattach runs:
//
//   - `pyattach COMMAND --help` shows the page's text (commandDetail) as
//     the command's detail, then kong's usage, arguments and flags;
//   - `pyattach help COMMAND` and the man page show the page with its
//     "## Usage" section rendered from kong's model (usageSection).
//
// The page file holds the same "## Usage" section, written by
// `UPDATE_HELP=1 go test ./cmd/pyattach -run TestHelpUsageSections`, so
// that it reads whole where README.md links it; TestHelp fails when the
// file and what pyattach prints differ.

// usageHeading starts the section of a command page that is rendered from
// kong's model; it ends at the next "## " heading or the page's end.
const usageHeading = "## Usage"

// commandNode is the visible top-level command named name, or nil.
func commandNode(app *kong.Application, name string) *kong.Node {
	for _, c := range app.Children {
		if c.Type == kong.CommandNode && !c.Hidden && c.Name == name {
			return c
		}
	}
	return nil
}

// lazyRegexp compiles expr the first time it is used: help text is
// formatted only when help is printed, never at start-up.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// printHelp is kong's help printer, with a command's detail its
// reference page's text. Only the page of the command whose help is
// printed is formatted, and only then (commandDetail costs more than
// the rest of start-up): kong shows no other command's detail.
func printHelp(o kong.HelpOptions, ctx *kong.Context) error {
	if c := ctx.Selected(); c != nil && c.Parent == ctx.Model.Node && !c.Hidden {
		if page, ok := helpPage(c.Name); ok {
			c.Detail = commandDetail(page)
		}
	}
	return kong.DefaultHelpPrinter(o, ctx)
}

// applyPages makes each command's detail (its --help text) the text of its
// reference page.
func applyPages(app *kong.Application) {
	for _, c := range app.Children {
		if c.Type != kong.CommandNode || c.Hidden {
			continue
		}
		if page, ok := helpPage(c.Name); ok {
			c.Detail = commandDetail(page)
		}
	}
}

// cutUsage returns the page without its "## Usage" section, and whether
// it had one.
func cutUsage(page string) (before, after string, ok bool) {
	i := strings.Index(page, "\n"+usageHeading+"\n")
	if i < 0 {
		return page, "", false
	}
	before, rest := page[:i+1], page[i+1+len(usageHeading)+1:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		return before, rest[j+1:], true
	}
	return before, "", true
}

// withUsage is a command page with its "## Usage" section rendered from
// the command's node.
func withUsage(page string, n *kong.Node, globals []*kong.Flag) string {
	before, after, ok := cutUsage(page)
	if !ok {
		return page
	}
	usage := usageSection(n, globals)
	if after != "" {
		usage += "\n"
	}
	return before + usage + after
}

// pageBody is a command page without its "## Usage" section (kong's
// model is shown instead).
func pageBody(page string) string {
	before, after, _ := cutUsage(page)
	return strings.TrimRight(before, "\n") + "\n" + map[bool]string{true: "\n" + after, false: ""}[after != ""]
}

var mdListItem = lazyRegexp(`^(- |\d+\. )`)

// commandDetail is a command page as the plain text kong shows under a
// command's usage line (through go/doc's text formatter): the title and
// the "## Usage" section left out (kong prints usage, arguments and
// flags itself), headings as "Heading:", code spans and bold without
// their marks, list items, table rows and fenced blocks indented so that
// they keep their lines.
func commandDetail(page string) string {
	lines := strings.Split(strings.TrimRight(pageBody(page), "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "# ") {
		lines = lines[1:]
	}
	var out []string
	fence, item := false, false
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "```"):
			fence = !fence
			continue
		case fence:
			l = "    " + l
		case l == "":
			item = false
		case strings.HasPrefix(l, "    "):
		case strings.HasPrefix(l, "#"):
			l = strings.TrimLeft(l, "# ") + ":"
		case strings.HasPrefix(l, "|"):
			if mdTableSep().MatchString(l) {
				continue
			}
			l = "  " + l
		case mdListItem().MatchString(l):
			item = true
			l = "  " + l
		case item:
			l = "    " + strings.TrimSpace(l)
		}
		out = append(out, l)
	}
	s := strings.Join(out, "\n")
	s = mdCode().ReplaceAllString(s, "$1")
	s = mdBold().ReplaceAllString(s, "$1")
	return strings.TrimSpace(s)
}

// usageSection renders a command's "## Usage" section from its node: the
// synopsis of it and of each subcommand, then each argument and flag
// with kong's help; globals are the global flags that concern this
// command (gdb's and lldb's).
func usageSection(n *kong.Node, globals []*kong.Flag) string {
	var b strings.Builder
	b.WriteString(usageHeading + "\n\n")
	b.WriteString("<!-- Written from the flags' help in cmd/pyattach (pyattach help development). -->\n\n")
	var nodes []*kong.Node
	if len(n.Positional) > 0 || len(visibleFlags(n)) > 0 || len(n.Children) == 0 {
		nodes = append(nodes, n)
	}
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			nodes = append(nodes, c)
		}
	}
	for i, c := range nodes {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "    %s\n", commandSynopsis(c))
		if c != n && c.Help != "" {
			fmt.Fprintf(&b, "\n%s\n", mdHelp(c.Help))
		}
		var items []string
		for _, p := range c.Positional {
			name := strings.ToUpper(p.Name)
			if p.IsSlice() {
				name += "..."
			}
			items = append(items, fmt.Sprintf("- `%s`: %s", name, mdHelp(p.Help)))
		}
		flags := visibleFlags(c)
		if c == n {
			flags = append(flags, globals...)
		}
		for _, f := range flags {
			items = append(items, fmt.Sprintf("- `%s`: %s", flagSynopsis(f), flagHelp(f)))
		}
		if len(items) > 0 {
			b.WriteString("\n" + strings.Join(items, "\n") + "\n")
		}
	}
	return b.String()
}

// flagSynopsis is "-v, --verbose" or "--max-tasks=N".
func flagSynopsis(f *kong.Flag) string {
	s := "--" + f.Name
	if f.Short != 0 {
		s = "-" + string(f.Short) + ", " + s
	}
	switch {
	case f.IsBool() || f.IsCounter():
	case f.PlaceHolder != "":
		s += "=" + f.PlaceHolder
	case f.Enum != "":
		s += "=" + strings.ReplaceAll(f.Enum, ",", "|")
	default:
		s += "=" + strings.ToUpper(f.Name)
	}
	return s
}

// mdAngle is a word with <angle brackets>, which Markdown would take for
// HTML.
var mdAngle = lazyRegexp(`[^\s()]*<[^>\s]+>[^\s(),;:]*`)

// mdHelp is help text as Markdown: words with angle brackets as code.
func mdHelp(s string) string {
	return mdAngle().ReplaceAllString(s, "`$0`")
}

// flagHelp is a flag's help, with its default and its variable.
func flagHelp(f *kong.Flag) string {
	h := strings.TrimSpace(f.Help)
	var notes []string
	if f.Default != "" && !f.IsBool() {
		notes = append(notes, "default: "+f.Default)
	}
	for _, e := range f.Envs {
		notes = append(notes, "$"+e)
	}
	if len(notes) > 0 {
		h = strings.TrimSuffix(h, ".") + " (" + strings.Join(notes, "; ") + ")."
	}
	return mdHelp(h)
}

// globalsFor are the global flags whose help says they concern the
// command ("gdb, lldb: ...", "gdb: ...").
func globalsFor(app *kong.Application, name string) []*kong.Flag {
	var out []*kong.Flag
	for _, f := range visibleFlags(app.Node) {
		who, _, ok := strings.Cut(f.Help, ": ")
		if !ok || strings.Contains(who, " ") && !strings.Contains(who, ",") {
			continue
		}
		for _, w := range strings.Split(who, ",") {
			if strings.TrimSpace(w) == name {
				out = append(out, f)
			}
		}
	}
	return out
}

// commandPage is the reference page of the top-level command name, with
// its "## Usage" section rendered from app, or false.
func commandPage(app *kong.Application, name string) (string, bool) {
	n := commandNode(app, name)
	if n == nil {
		return "", false
	}
	page, ok := helpPage(name)
	if !ok {
		return "", false
	}
	return withUsage(page, n, globalsFor(app, name)), true
}
