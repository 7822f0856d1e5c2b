package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// TestHelpTopicsAreFiles: every page under help/ is a listed topic, every
// topic a page with a "# TOPIC: summary" title.
func TestHelpTopicsAreFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("help", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".md"))
	}
	// Sorted as names: Glob sorted the file names ("lldb-dap.md" before
	// "lldb.md").
	slices.Sort(names)
	want := slices.Clone(helpTopics)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("help/*.md are %v, helpTopics %v", names, want)
	}
	for _, topic := range helpTopics {
		page, _ := helpPage(topic)
		if !strings.HasPrefix(page, "# "+topic+": ") || helpSummary(topic) == "" {
			t.Errorf("help/%s.md: first line is not \"# %s: summary\"", topic, topic)
		}
	}
}

// TestHelp: `pyattach help` lists every topic; `pyattach help TOPIC`
// prints the file itself, byte for byte.
func TestHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"help"}, nil, &stdout, &stderr, testEnv(t)); code != 0 || stderr.Len() != 0 {
		t.Fatalf("pyattach help: exit %d, stderr %q", code, stderr.String())
	}
	for _, topic := range helpTopics {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(topic) + ` +\S`).MatchString(stdout.String()) {
			t.Errorf("pyattach help does not list %s:\n%s", topic, stdout.String())
		}
	}
	for _, topic := range helpTopics {
		want, err := os.ReadFile(filepath.Join("help", topic+".md"))
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"help", topic}, nil, &stdout, &stderr, testEnv(t)); code != 0 || stderr.Len() != 0 {
			t.Errorf("pyattach help %s: exit %d, stderr %q", topic, code, stderr.String())
		}
		if stdout.String() != string(want) {
			t.Errorf("pyattach help %s does not print help/%s.md", topic, topic)
		}
	}
}

// TestHelpUnknownTopic: one error line, one hint line, exit 2.
func TestHelpUnknownTopic(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Main([]string{"help", "nosuch"}, nil, &stdout, &stderr, testEnv(t))
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `pyattach: error: help: no page "nosuch"`) ||
		!strings.HasPrefix(lines[1], "  hint: run 'pyattach help'") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}
}

// mdLink is a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestReadmeFrontPage: README.md stays a page read in five minutes (under
// 15 KB), links every reference page, and every relative link in it and
// in the pages names a file of the repository.
func TestReadmeFrontPage(t *testing.T) {
	repo := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) >= 15*1024 {
		t.Errorf("README.md is %d bytes; keep it under 15 KB and move reference text to cmd/pyattach/help/", len(readme))
	}
	docs := map[string][]byte{"README.md": readme}
	for _, topic := range helpTopics {
		b, err := os.ReadFile(filepath.Join("help", topic+".md"))
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Join("cmd", "pyattach", "help", topic+".md")] = b
	}
	linked := map[string]bool{}
	for doc, text := range docs {
		for _, m := range mdLink.FindAllSubmatch(text, -1) {
			target := string(m[1])
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			rel := filepath.Join(filepath.Dir(doc), target)
			if _, err := os.Stat(filepath.Join(repo, rel)); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, m[1])
			}
			if doc == "README.md" {
				linked[filepath.ToSlash(rel)] = true
			}
		}
	}
	for _, topic := range helpTopics {
		if !linked["cmd/pyattach/help/"+topic+".md"] {
			t.Errorf("README.md does not link cmd/pyattach/help/%s.md", topic)
		}
	}
}

// TestMdRoff: the Markdown the pages use, as roff: a code span across a
// line break, bold and emphasis, a list, a table and an example block.
func TestMdRoff(t *testing.T) {
	md := "# t: title\n\n" +
		"Reads `--config\nFILE` and **Bold.** a *foreign* `*-gdb.py`.\n\n" +
		"- one\n  two `x`\n\n" +
		"| a | b |\n|---|---|\n| `k` | v \\| w |\n\n" +
		"    $ pyattach -x\n\n" +
		"## Sub\n\n.dot – done\n"
	want := ".PP\nReads \\fB\\-\\-config\nFILE\\fR and \\fBBold.\\fR a \\fIforeign\\fR \\fB*\\-gdb.py\\fR.\n" +
		".IP \\(bu 2\none\ntwo \\fBx\\fR\n" +
		".TP\n\\fBk\\fR\nv | w\n" +
		".sp\n.RS 2\n.nf\n$ pyattach \\-x\n.fi\n.RE\n" +
		".SS \"Sub\"\n.PP\n\\&.dot \\[u2013] done\n"
	if got := mdRoff(md); got != want {
		t.Errorf("mdRoff:\n%s\nwant:\n%s", got, want)
	}
}

// helpModel is pyattach's kong model, as Main builds it.
func helpModel(t *testing.T) *kong.Application {
	t.Helper()
	var cli CLI
	parser, err := kong.New(&cli, append(rawArgOptions(), kong.Name("pyattach"), kong.Vars{"version": versionLine()})...)
	if err != nil {
		t.Fatal(err)
	}
	applyPages(parser.Model)
	return parser.Model
}

// TestHelpUsageSections: each command's page holds a "## Usage" section
// that is what pyattach renders from the flags' help (the one source of
// the arguments and flags); UPDATE_HELP=1 rewrites the files.
func TestHelpUsageSections(t *testing.T) {
	app := helpModel(t)
	for _, topic := range helpTopics {
		if commandNode(app, topic) == nil {
			continue
		}
		file := filepath.Join("help", topic+".md")
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, ok := cutUsage(string(b)); !ok {
			t.Errorf("%s has no %q section (its arguments and flags, rendered from kong's model)", file, usageHeading)
			continue
		}
		got, _ := commandPage(app, topic)
		if got == string(b) {
			continue
		}
		if os.Getenv("UPDATE_HELP") != "" {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: its %q section is not what the flags' help says; rewrite it with UPDATE_HELP=1 go test ./cmd/pyattach -run TestHelpUsageSections", file, usageHeading)
	}
}

// TestCommandHelpIsItsPage: a command's --help text is its reference
// page (no Help method writes a second one), and `pyattach COMMAND --help`
// prints the page's examples.
func TestCommandHelpIsItsPage(t *testing.T) {
	app := helpModel(t)
	for _, c := range app.Children {
		if c.Type != kong.CommandNode || c.Hidden {
			continue
		}
		page, ok := helpPage(c.Name)
		if !ok {
			continue
		}
		if _, ok := c.Target.Addr().Interface().(kong.HelpProvider); ok {
			t.Errorf("the %s command has a Help method: its --help text is help/%s.md", c.Name, c.Name)
		}
		if c.Detail != commandDetail(page) {
			t.Errorf("pyattach %s --help does not show help/%s.md", c.Name, c.Name)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"dump", "--help"}, nil, &stdout, &stderr, testEnv(t)); code != 0 {
		t.Fatalf("pyattach dump --help: exit %d, %s", code, stderr.String())
	}
	for _, want := range []string{"Examples:", "pyattach dump --tasks 12345", "--max-tasks=N"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("pyattach dump --help lacks %q:\n%s", want, stdout.String())
		}
	}
}
