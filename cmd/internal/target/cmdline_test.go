package target

import (
	"os"
	"path/filepath"
	"testing"
)

// A relative -H is taken from the process's working directory, the last
// venv option wins, and options naming no venv are passed over.
func TestCmdlineVenv(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"a", "b"} {
		bin := filepath.Join(dir, v, "bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, v, "pyvenv.cfg"), []byte("home = /usr/bin\nversion = 3.11.99\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "python"), []byte("\x7fELF"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		cwd  string
		want string
	}{
		{[]string{"uwsgi", "-H", "a"}, dir, filepath.Join(dir, "a")},
		{[]string{"uwsgi", "-H", "a"}, "", ""},
		{[]string{"uwsgi", "--home", filepath.Join(dir, "a"), "--venv=" + filepath.Join(dir, "b")}, "", filepath.Join(dir, "b")},
		{[]string{"uwsgi", "-H", filepath.Join(dir, "a"), "-H", dir}, "", filepath.Join(dir, "a")},
		{[]string{"uwsgi", "--http", ":8000"}, dir, ""},
		{[]string{"uwsgi", "-H"}, dir, ""},
	} {
		v, ok := cmdlineVenv(tc.args, tc.cwd)
		if ok != (tc.want != "") || v.Path != tc.want {
			t.Errorf("cmdlineVenv(%q, %q) = %+v %v, want %q", tc.args, tc.cwd, v, ok, tc.want)
			continue
		}
		if ok && (v.Source != "cmdline" || v.Version != "3.11.99" || v.Home != "/usr/bin") {
			t.Errorf("cmdlineVenv(%q): %+v", tc.args, v)
		}
	}
}
