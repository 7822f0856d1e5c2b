package elfinfo

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// readelfFacts runs readelf once over a batch of files and returns each
// file's build-id and .gnu_debuglink name as readelf prints them.
func readelfFacts(t *testing.T, readelf string, files []string) map[string][2]string {
	t.Helper()
	args := append([]string{"-W", "-n", "--string-dump=.gnu_debuglink"}, files...)
	cmd := exec.Command(readelf, args...)
	out, _ := cmd.Output() // readelf exits non-zero when a file lacks the section
	facts := map[string][2]string{}
	cur := ""
	if len(files) == 1 {
		cur = files[0]
	}
	sawDebuglink := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f, ok := strings.CutPrefix(line, "File: "); ok {
			cur = f
			sawDebuglink = false
			continue
		}
		v := facts[cur]
		switch {
		case strings.HasPrefix(line, "String dump of section '.gnu_debuglink'"):
			sawDebuglink = true
		case sawDebuglink && strings.HasPrefix(line, "  [     0]  "):
			v[1] = strings.TrimPrefix(line, "  [     0]  ")
			sawDebuglink = false
		case strings.Contains(line, "Build ID: ") && v[0] == "":
			_, id, _ := strings.Cut(line, "Build ID: ")
			v[0] = strings.TrimSpace(id)
		}
		facts[cur] = v
	}
	return facts
}

// TestEveryELFFileAgreesWithReadelf reads every ELF file under /usr/bin
// and /usr/lib and checks that the build-id and .gnu_debuglink name
// pyattach reads are the ones readelf prints.
func TestEveryELFFileAgreesWithReadelf(t *testing.T) {
	testenv.Short(t, "walks every ELF file under /usr/bin and /usr/lib")
	readelf := testenv.Need(t, "readelf")
	var files []string
	for _, root := range []string{"/usr/bin", "/usr/lib"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			var magic [4]byte
			n, _ := f.Read(magic[:])
			f.Close()
			if n == 4 && string(magic[:]) == "\x7fELF" {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) < 50 {
		t.Fatalf("found only %d ELF files under /usr/bin and /usr/lib", len(files))
	}
	checked, withLink, withID := 0, 0, 0
	const batch = 200
	for i := 0; i < len(files); i += batch {
		end := min(i+batch, len(files))
		facts := readelfFacts(t, readelf, files[i:end])
		for _, p := range files[i:end] {
			want, ok := facts[p]
			if !ok {
				continue // readelf could not read it either
			}
			info, err := Open(p, Options{})
			if err != nil {
				t.Errorf("%s: %v (readelf reads build-id %q)", p, err, want[0])
				continue
			}
			checked++
			if info.BuildID != want[0] {
				t.Errorf("%s: build-id %q, readelf %q", p, info.BuildID, want[0])
			}
			got := ""
			if info.DebugLink != nil {
				got = info.DebugLink.Name
				withLink++
			}
			if got != want[1] {
				t.Errorf("%s: debuglink %q, readelf %q", p, got, want[1])
			}
			if info.BuildID != "" {
				withID++
			}
		}
	}
	t.Logf("%d ELF files checked against readelf: %d with a build-id, %d with a .gnu_debuglink", checked, withID, withLink)
}
