package wheel

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func testWheel() *Wheel {
	return &Wheel{
		Name:            "pyattach",
		Version:         "0.3.0.post4+g1f2e3d4",
		Tags:            "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64",
		Metadata:        [][2]string{{"Summary", "Debug Python with gdb"}, {"License", "MIT"}},
		Description:     "# pyattach\n\nText.\n",
		DescriptionType: "text/markdown",
		Scripts:         []File{{Name: "pyattach", Data: []byte("\x7fELF binary"), Mode: 0o755}},
		Licenses:        []File{{Name: "LICENSE", Data: []byte("MIT License\n"), Mode: 0o644}},
		Time:            time.Unix(1700000000, 0),
	}
}

func TestWrite(t *testing.T) {
	w := testWheel()
	if got, want := w.FileName(), "pyattach-0.3.0.post4+g1f2e3d4-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"; got != want {
		t.Errorf("FileName = %q, want %q", got, want)
	}
	var buf bytes.Buffer
	if err := w.Write(&buf); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = b
		names = append(names, f.Name)
		if f.Name == "pyattach-0.3.0.post4+g1f2e3d4.data/scripts/pyattach" && f.Mode().Perm() != 0o755 {
			t.Errorf("script mode %v, want 0755", f.Mode())
		}
	}
	want := []string{
		"pyattach-0.3.0.post4+g1f2e3d4.data/scripts/pyattach",
		"pyattach-0.3.0.post4+g1f2e3d4.dist-info/METADATA",
		"pyattach-0.3.0.post4+g1f2e3d4.dist-info/WHEEL",
		"pyattach-0.3.0.post4+g1f2e3d4.dist-info/LICENSE",
		"pyattach-0.3.0.post4+g1f2e3d4.dist-info/RECORD",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("files %q, want %q", names, want)
	}

	// RECORD: every other file with its digest and size, itself without.
	recs, err := csv.NewReader(bytes.NewReader(files[want[4]])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(want) {
		t.Fatalf("RECORD has %d lines, want %d", len(recs), len(want))
	}
	for _, r := range recs {
		if r[0] == want[4] {
			if r[1] != "" || r[2] != "" {
				t.Errorf("RECORD's own line %q", r)
			}
			continue
		}
		data, ok := files[r[0]]
		if !ok {
			t.Errorf("RECORD names %s, not in the wheel", r[0])
			continue
		}
		sum := sha256.Sum256(data)
		if r[1] != "sha256="+strings.TrimRight(base64.URLEncoding.EncodeToString(sum[:]), "=") {
			t.Errorf("%s: RECORD digest %s is wrong", r[0], r[1])
		}
		if r[2] != strconv.Itoa(len(data)) {
			t.Errorf("%s: RECORD size %s, want %d", r[0], r[2], len(data))
		}
	}

	meta := string(files[want[1]])
	for _, line := range []string{"Metadata-Version: 2.1\n", "Name: pyattach\n", "Version: 0.3.0.post4+g1f2e3d4\n",
		"Summary: Debug Python with gdb\n", "License-File: LICENSE\n", "Description-Content-Type: text/markdown\n"} {
		if !strings.Contains(meta, line) {
			t.Errorf("METADATA lacks %q:\n%s", line, meta)
		}
	}
	if !strings.HasSuffix(meta, "\n\n# pyattach\n\nText.\n") {
		t.Errorf("METADATA does not end with the description:\n%s", meta)
	}
	wf := string(files[want[2]])
	for _, line := range []string{"Wheel-Version: 1.0\n", "Root-Is-Purelib: false\n",
		"Tag: py3-none-manylinux_2_17_x86_64\n", "Tag: py3-none-manylinux2014_x86_64\n"} {
		if !strings.Contains(wf, line) {
			t.Errorf("WHEEL lacks %q:\n%s", line, wf)
		}
	}

	// Deterministic: the same input gives the same bytes.
	var again bytes.Buffer
	if err := testWheel().Write(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("two writes of the same wheel differ")
	}
}

func TestWriteRefuses(t *testing.T) {
	for name, change := range map[string]func(*Wheel){
		"version":       func(w *Wheel) { w.Version = "0.3.0-4-g1f2e3d4" },
		"tags":          func(w *Wheel) { w.Tags = "manylinux" },
		"script name":   func(w *Wheel) { w.Scripts[0].Name = "../pyattach" },
		"metadata line": func(w *Wheel) { w.Metadata = append(w.Metadata, [2]string{"Summary", "a\nVersion: 9"}) },
		"no scripts":    func(w *Wheel) { w.Scripts = nil },
		"time":          func(w *Wheel) { w.Time = time.Unix(0, 0) },
	} {
		w := testWheel()
		change(w)
		if err := w.Write(io.Discard); err == nil {
			t.Errorf("%s: Write accepted a bad wheel", name)
		}
	}
}

func TestExpandTags(t *testing.T) {
	got := ExpandTags("py3-none-manylinux_2_17_aarch64.manylinux2014_aarch64")
	want := []string{"py3-none-manylinux_2_17_aarch64", "py3-none-manylinux2014_aarch64"}
	if !slices.Equal(got, want) {
		t.Errorf("ExpandTags = %q, want %q", got, want)
	}
}
