package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// ManCmd is `pyattach man`.
type ManCmd struct{}

// Help is shown by `pyattach man --help`.
func (c *ManCmd) Help() string {
	return `The page is made from the same text as --help: every command, its
arguments and flags. The .deb and the release archives ship it already.

Examples:
  pyattach man | man -l -
  pyattach man > ~/.local/share/man/man1/pyattach.1`
}

// Run prints the man page.
func (c *ManCmd) Run(app *App, kctx *kong.Context) error {
	ver, day := releaseInfo()
	_, err := io.WriteString(app.Stdout, manPage(kctx.Model, ver, day))
	return err
}

// manPage renders the kong model as a man(7) page: NAME and DESCRIPTION
// from the application's help, the global flags, then one subsection per
// visible command with its help, details, arguments and flags, then the
// sections made from help pages (manSections).
func manPage(app *kong.Application, ver, day string) string {
	var b strings.Builder
	name := app.Name
	summary, rest, _ := strings.Cut(strings.TrimSpace(app.Help), "\n")
	summary = strings.TrimSuffix(strings.TrimSpace(summary), ".")
	if summary != "" {
		summary = strings.ToLower(summary[:1]) + summary[1:]
	}
	fmt.Fprintf(&b, ".TH %s 1 %s %s \"User Commands\"\n", strings.ToUpper(name), roffArg(day), roffArg(name+" "+ver))
	// Left-aligned, not justified: the pages hold long paths that a
	// justified line cannot space out.
	b.WriteString(".ad l\n")
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(summary))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n[\\fIFLAGS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR...]\n", roffEscape(name))
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(roffText(rest))
	if flags := visibleFlags(app.Node); len(flags) > 0 {
		b.WriteString(".SH OPTIONS\nThese go before the command.\n")
		for _, f := range flags {
			b.WriteString(roffFlag(f))
		}
	}
	b.WriteString(".SH COMMANDS\n")
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, c := range n.Children {
			if c.Hidden || c.Type != kong.CommandNode {
				continue
			}
			fmt.Fprintf(&b, ".SS %s\n", roffArg(commandSynopsis(c)))
			b.WriteString(roffText(c.Help))
			if page, ok := helpPage(c.Name); ok && c.Parent == app.Node {
				// The command's reference page, whose usage section
				// the arguments and flags below stand for.
				b.WriteString(mdRoff(pageBody(page)))
			} else if c.Detail != "" {
				b.WriteString(".PP\n")
				b.WriteString(roffText(c.Detail))
			}
			for _, p := range c.Positional {
				fmt.Fprintf(&b, ".TP\n\\fI%s\\fR\n%s", roffEscape(strings.ToUpper(p.Name)), roffText(p.Help))
			}
			for _, f := range visibleFlags(c) {
				b.WriteString(roffFlag(f))
			}
			walk(c)
		}
	}
	walk(app.Node)
	var envs []string
	_ = kong.Visit(app.Node, func(v kong.Visitable, next kong.Next) error {
		if f, ok := v.(*kong.Flag); ok && !f.Hidden {
			for _, e := range f.Envs {
				envs = append(envs, fmt.Sprintf(".TP\n.B %s\nas --%s\n", roffEscape(e), roffEscape(f.Name)))
			}
		}
		return next(nil)
	})
	// CONFIGURATION, ENVIRONMENT, FILES and SECURITY are help pages,
	// written once (help/*.md); the flags' variables join ENVIRONMENT.
	for _, sec := range manSections {
		page, _ := helpPage(sec.topic)
		fmt.Fprintf(&b, ".SH %s\n%s", sec.name, mdRoff(page))
		if sec.name == "ENVIRONMENT" {
			b.WriteString(strings.Join(envs, ""))
		}
	}
	fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", roffEscape("gdb(1), lldb(1), debuginfod-find(1); pyattach help TOPIC for the reference pages (pyattach help lists them); the README at https://github.com/pyattach/pyattach"))
	return b.String()
}

// commandSynopsis is "pyattach symbols install ZIP" or
// "pyattach doctor [TARGET]".
func commandSynopsis(n *kong.Node) string {
	var parts []string
	for p := n; p != nil; p = p.Parent {
		parts = append([]string{p.Name}, parts...)
	}
	if n.Passthrough {
		parts = append(parts[:1], append([]string{"[FLAGS]"}, parts[1:]...)...)
	}
	for _, p := range n.Positional {
		a := strings.ToUpper(p.Name)
		if p.IsSlice() {
			a += "..."
		}
		if !p.Required {
			a = "[" + a + "]"
		}
		parts = append(parts, a)
	}
	if len(visibleFlags(n)) > 0 {
		parts = append(parts, "[FLAGS]")
	}
	return strings.Join(parts, " ")
}

func visibleFlags(n *kong.Node) []*kong.Flag {
	var out []*kong.Flag
	for _, f := range n.Flags {
		if !f.Hidden {
			out = append(out, f)
		}
	}
	return out
}

// roffFlag is a tagged paragraph: "-v, --verbose" or "--debug-dir=DIR",
// then the help.
func roffFlag(f *kong.Flag) string {
	var tag string
	if f.Short != 0 {
		tag = fmt.Sprintf("\\fB\\-%s\\fR, ", roffEscape(string(f.Short)))
	}
	tag += "\\fB\\-\\-" + roffEscape(f.Name) + "\\fR"
	if !f.IsBool() && !f.IsCounter() {
		tag += "=\\fI" + roffEscape(f.FormatPlaceHolder()) + "\\fR"
	}
	help := f.Help
	if f.IsSlice() {
		help = strings.TrimSuffix(help, ".") + "."
	}
	return ".TP\n" + tag + "\n" + roffText(help)
}

// roffText renders help text: paragraphs split by blank lines, and
// indented lines (examples) as unfilled, indented blocks.
func roffText(s string) string {
	var b strings.Builder
	block := false
	para := false // a paragraph break is due before the next text
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		line = strings.TrimRight(line, " \t")
		switch {
		case line == "":
			if block {
				b.WriteString(".fi\n.RE\n")
				block = false
			}
			para = true
		case strings.HasPrefix(line, " "):
			if !block {
				b.WriteString(".RS 2\n.nf\n")
				block = true
			}
			b.WriteString(roffEscape(strings.TrimPrefix(line, "  ")) + "\n")
			para = false
		default:
			if block {
				b.WriteString(".fi\n.RE\n")
				block = false
			}
			if para {
				b.WriteString(".PP\n")
				para = false
			}
			b.WriteString(roffEscape(line) + "\n")
		}
	}
	if block {
		b.WriteString(".fi\n.RE\n")
	}
	return b.String()
}

// roffEscape makes s literal text for roff: backslashes and minus signs
// escaped, and a line never starting with a control character.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffArg is s as one quoted macro argument.
func roffArg(s string) string {
	return `"` + strings.ReplaceAll(roffEscape(s), `"`, `\(dq`) + `"`
}
