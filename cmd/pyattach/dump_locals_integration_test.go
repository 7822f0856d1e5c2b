package main

import (
	"encoding/json"
	"math/big"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// localsApp holds still in leaf with one local of every kind the walker
// shows a repr of.
const localsApp = "import time\n" + localsDefs + `
print("ready", flush=True)
leaf()
`

// localsDefs are localsApp's classes and leaf, whose locals are one of
// every kind (factsApp runs leaf too).
const localsDefs = `
class Widget:
    def __init__(self, name, size):
        self.name = name
        self.size = size

class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b

def leaf():
    nothing = None
    yes = True
    n = -42
    huge = 7 ** 1183
    f = 2.5
    s = "h\xe9llo\n"
    b = b"by\x00tes"
    t = (1, "two")
    one = (1,)
    nested = {"a": {"b": {"c": {"d": 1}}}, "n": [1, (2, 3)]}
    loop = [1, 2]
    loop.append(loop)
    many = list(range(20))
    st = {3, 1, 2}
    fs = frozenset({"x"})
    w = Widget("gizmo", 12)
    sl = Slotted(1, "two")
    time.sleep(1000)
`

// localsWant are leaf's locals as dump --locals shows them, in order;
// ADDR stands for an address.
func localsWant() [][2]string {
	huge := big.NewInt(7)
	huge.Exp(huge, big.NewInt(1183), nil)
	return [][2]string{
		{"nothing", "None"},
		{"yes", "True"},
		{"n", "-42"},
		{"huge", huge.String()},
		{"f", "2.5"},
		{"s", `'héllo\n'`},
		{"b", `b'by\x00tes'`},
		{"t", "(1, 'two')"},
		{"one", "(1,)"},
		{"nested", "{'a': {'b': {'c': <dict object at ADDR>}}, 'n': [1, (2, 3)]}"},
		{"loop", "[1, 2, [...]]"},
		{"many", "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ...]"},
		{"st", "{1, 2, 3}"},
		{"fs", "frozenset({'x'})"},
		{"w", "<Widget(name='gizmo', size=12) at ADDR>"},
		{"sl", "<Slotted(a=1, b='two') at ADDR>"},
	}
}

func addrPattern(want string) *regexp.Regexp {
	return regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(want), "ADDR", "0x[0-9a-f]+") + "$")
}

// checkLocalsJSON checks leaf's frame in dump --locals --json: its
// locals object holds every local of leaf, in order, with its repr.
func checkLocalsJSON(t *testing.T, what, stdout string) {
	t.Helper()
	var d struct {
		Threads []struct {
			Frames []struct {
				Function string          `json:"function"`
				Locals   json.RawMessage `json:"locals"`
			} `json:"frames"`
		} `json:"threads"`
	}
	if err := json.Unmarshal([]byte(stdout), &d); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stdout)
	}
	for _, th := range d.Threads {
		for _, f := range th.Frames {
			if f.Function != "leaf" {
				continue
			}
			// The object's keys, in order.
			dec := json.NewDecoder(strings.NewReader(string(f.Locals)))
			var got [][2]string
			if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
				t.Fatalf("%s: locals is not an object: %s", what, f.Locals)
			}
			for dec.More() {
				k, _ := dec.Token()
				v, _ := dec.Token()
				ks, _ := k.(string)
				vs, _ := v.(string)
				got = append(got, [2]string{ks, vs})
			}
			want := localsWant()
			ok := len(got) == len(want)
			for i := 0; ok && i < len(want); i++ {
				ok = got[i][0] == want[i][0] && addrPattern(want[i][1]).MatchString(got[i][1])
			}
			if !ok {
				t.Errorf("%s: leaf's locals\n got %q\nwant %q", what, got, want)
			}
			return
		}
	}
	t.Errorf("%s: no frame of leaf:\n%s", what, stdout)
}

// TestDumpLocals: pyattach dump --locals of Debian's python3.11 and of
// every pyenv 3.7+ version, live and from a gcore core: leaf's frame
// carries every local with its exact repr (JSON, in the code's order),
// and the text shows them under the frame, escaped.
func TestDumpLocals(t *testing.T) {
	testenv.Need(t, "gdb")
	gcore := testenv.Need(t, "gcore")
	for _, in := range dumpInterpreters(t) {
		t.Run(in.name, func(t *testing.T) {
			testenv.Parallel(t)
			env := scriptEnv(t.TempDir())
			pid := strconv.Itoa(testenv.StartPython(t, in.exe, localsApp))

			stdout, _ := pyattachOK(t, "pyattach dump --locals --json", pyattachBin(t), env, "dump", "--locals", "--json", pid)
			checkLocalsJSON(t, "live", stdout)
			text, _ := pyattachOK(t, "pyattach dump --locals", pyattachBin(t), env, "dump", "--locals", pid)
			for _, l := range []string{`      s = 'héllo\n'`, `      loop = [1, 2, [...]]`, "      nothing = None"} {
				if !strings.Contains(text, "\n"+l+"\n") {
					t.Errorf("text: no line %q:\n%s", l, text)
				}
			}
			if plain, _ := pyattachOK(t, "pyattach dump --json", pyattachBin(t), env, "dump", "--json", pid); strings.Contains(plain, `"locals"`) {
				t.Errorf("dump --json without --locals has locals:\n%s", plain)
			}

			core := filepath.Join(t.TempDir(), "core")
			if out, err := exec.Command(gcore, "-o", core, pid).CombinedOutput(); err != nil {
				t.Fatalf("gcore: %v\n%s", err, out)
			}
			stdout, _ = pyattachOK(t, "pyattach dump --locals --json core", pyattachBin(t), env, "dump", "--locals", "--json", core+"."+pid)
			checkLocalsJSON(t, "core", stdout)
		})
	}
}
