package main

import (
	"embed"
	"fmt"
	"strings"

	"github.com/alecthomas/kong"
)

// The reference pages: Markdown files that README.md links to and that
// `pyattach help TOPIC` prints (a command's with its usage section
// rendered from kong's model, cmdpages.go); a command's page is also its
// --help text, and the man page renders the commands' pages and some
// others (manSections). Each is written once, here.
//
//go:embed help/*.md
var helpFS embed.FS

// helpTopics is the order `pyattach help` lists the pages in; every file
// under help/ is one of them (TestHelpTopicsAreFiles).
var helpTopics = []string{
	"resolve", "gdb", "lldb", "lldb-dap", "walker", "dump", "bundle", "init", "debuginfo",
	"srcmap", "doctor", "symbols", "trust", "fetch-extension", "completion",
	"containers", "json", "errors", "configuration", "environment", "files",
	"security", "architecture", "development", "packaging",
}

// HelpCmd is `pyattach help [TOPIC]`.
type HelpCmd struct {
	Topic string `arg:"" optional:"" help:"The page to print (without one, the list of pages)."`
}

// Help is shown by `pyattach help --help`.
func (c *HelpCmd) Help() string {
	return `The pages are the Markdown files README.md links to
(cmd/pyattach/help/TOPIC.md in the repository). A command's page is also
its 'pyattach COMMAND --help', and ends with its flags.

Examples:
  pyattach help
  pyattach help security
  pyattach help json | less`
}

// Run prints the list of topics, or one page (a command's with its
// usage, arguments and flags from kong's model).
func (c *HelpCmd) Run(app *App, kctx *kong.Context) error {
	if c.Topic == "" {
		fmt.Fprintln(app.Stdout, "Reference pages (pyattach help TOPIC):")
		for _, t := range helpTopics {
			fmt.Fprintf(app.Stdout, "  %-16s %s\n", t, helpSummary(t))
		}
		return nil
	}
	page, ok := commandPage(kctx.Model, c.Topic)
	if !ok {
		page, ok = helpPage(c.Topic)
	}
	if !ok {
		report(app.Stderr, withHint(fmt.Errorf("help: no page %q", c.Topic),
			"run 'pyattach help' for the list of pages, or 'pyattach COMMAND --help' for a command's flags"))
		return exitError(2)
	}
	_, err := app.Stdout.Write([]byte(page))
	return err
}

// helpPage is the Markdown of a topic.
func helpPage(topic string) (string, bool) {
	for _, t := range helpTopics {
		if t == topic {
			b, err := helpFS.ReadFile("help/" + t + ".md")
			return string(b), err == nil
		}
	}
	return "", false
}

// helpSummary is what follows "TOPIC: " in a page's title line.
func helpSummary(topic string) string {
	page, _ := helpPage(topic)
	title, _, _ := strings.Cut(page, "\n")
	_, s, _ := strings.Cut(title, ": ")
	return s
}

// manSections are the man page sections made from help pages, in order.
var manSections = []struct{ name, topic string }{
	{"CONFIGURATION", "configuration"},
	{"ENVIRONMENT", "environment"},
	{"FILES", "files"},
	{"SECURITY", "security"},
}

var (
	mdCode     = lazyRegexp("`([^`]+)`")
	mdBold     = lazyRegexp(`\*\*([^*]+)\*\*`)
	mdItalic   = lazyRegexp(`(^|[\s(])\*([A-Za-z][^*\n]*[A-Za-z])\*`)
	mdNumbered = lazyRegexp(`^(\d+)\. `)
	mdTableSep = lazyRegexp(`^\|[-| :]+\|$`)
)

// mdRoff renders the Markdown of a help page as the body of a man page
// section: the title line is left out, headings become .SS, indented and
// fenced blocks unfilled examples, list items and table rows tagged
// paragraphs. It knows the Markdown the pages use, no more.
func mdRoff(md string) string {
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(md, "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "# ") {
		lines = lines[1:]
	}
	var text []string // the paragraph or list item being read
	block, fence, table := false, false, false
	flush := func() {
		if len(text) > 0 {
			b.WriteString(mdInline(strings.Join(text, "\n")) + "\n")
			text = nil
		}
	}
	startBlock := func() {
		flush()
		b.WriteString(".sp\n.RS 2\n.nf\n")
	}
	endBlock := func() {
		if block {
			b.WriteString(".fi\n.RE\n")
			block = false
		}
	}
	for _, line := range lines {
		line = strings.TrimRight(line, " \t")
		switch {
		case strings.HasPrefix(line, "<!--") && strings.HasSuffix(line, "-->"):
			continue // a note to the page's editors
		case strings.HasPrefix(line, "```"):
			if fence {
				b.WriteString(".fi\n.RE\n")
			} else {
				startBlock()
			}
			fence = !fence
		case fence:
			b.WriteString(roffLine(roffEscape(line)) + "\n")
		case line == "":
			flush()
			endBlock()
			table = false
		case strings.HasPrefix(line, "    ") && text == nil:
			if !block {
				startBlock()
				block = true
			}
			b.WriteString(roffLine(roffEscape(strings.TrimPrefix(line, "    "))) + "\n")
		case strings.HasPrefix(line, "#"):
			flush()
			fmt.Fprintf(&b, ".SS %s\n", roffArg(mdCode().ReplaceAllString(strings.TrimLeft(line, "# "), "$1")))
		case strings.HasPrefix(line, "|"):
			flush()
			if !table { // the first row names the columns
				table = true
				continue
			}
			if mdTableSep().MatchString(line) {
				continue
			}
			cells := splitRow(line)
			fmt.Fprintf(&b, ".TP\n%s\n", mdInline(cells[0]))
			if len(cells) > 1 {
				b.WriteString(mdInline(strings.Join(cells[1:], "; ")) + "\n")
			}
		case strings.HasPrefix(line, "- "):
			flush()
			b.WriteString(".IP \\(bu 2\n")
			text = []string{line[2:]}
		case mdNumbered().MatchString(line):
			flush()
			m := mdNumbered().FindStringSubmatch(line)
			fmt.Fprintf(&b, ".IP %s. 4\n", m[1])
			text = []string{line[len(m[0]):]}
		default:
			if text == nil {
				b.WriteString(".PP\n")
			}
			text = append(text, strings.TrimSpace(line))
		}
	}
	flush()
	endBlock()
	if fence {
		b.WriteString(".fi\n.RE\n")
	}
	return b.String()
}

// splitRow splits a table row at the | that are not escaped as \|.
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// mdInline is Markdown text (lines of one paragraph) as roff: `code` and
// **bold** in bold, *emphasis* in italics, everything else literal.
func mdInline(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = roffEscape(l)
	}
	s = strings.Join(lines, "\n")
	// A long path in a code span may break after a slash (\:), so
	// that groff can fill the line.
	s = mdCode().ReplaceAllStringFunc(s, func(m string) string {
		return `\fB` + strings.ReplaceAll(m[1:len(m)-1], "/", `/\:`) + `\fR`
	})
	s = mdBold().ReplaceAllString(s, `\fB$1\fR`)
	s = mdItalic().ReplaceAllString(s, `$1\fI$2\fR`)
	return roffLine(s)
}

// roffLine writes characters beyond ASCII as groff's \[uXXXX], so the
// page needs no input encoding.
func roffLine(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, `\[u%04X]`, r)
		}
	}
	return b.String()
}
