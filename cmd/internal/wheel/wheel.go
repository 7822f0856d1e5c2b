package wheel

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strings"
	"time"
)

// Wheel is what goes into one wheel file.
type Wheel struct {
	// Name is the distribution name ("pyattach"); Version a PEP 440
	// version ("0.3.0", "0.3.0.post4+g1f2e3d4").
	Name, Version string
	// Tags are the compressed tag set, such as
	// "py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64".
	Tags string
	// Metadata holds the core metadata fields in order (Summary,
	// License, Project-URL, ...), besides Metadata-Version, Name and
	// Version, which Write adds. A field may repeat.
	Metadata [][2]string
	// Description is the long description (a README) and
	// DescriptionType its content type ("text/markdown").
	Description, DescriptionType string
	// Scripts are the programs installed on PATH.
	Scripts []File
	// Licenses go into the .dist-info as they are named (and are
	// listed as License-File).
	Licenses []File
	// Generator names the tool in WHEEL.
	Generator string
	// Time stamps every file (at least 1980-01-01, zip's epoch).
	Time time.Time
}

// File is one file of the wheel.
type File struct {
	Name string // base name
	Data []byte
	Mode uint32 // permission bits, such as 0o755
}

var (
	nameRE    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	versionRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?(\+[a-z0-9]+(\.[a-z0-9]+)*)?$`)
	tagRE     = regexp.MustCompile(`^[a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+$`)
	baseRE    = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)
)

// FileName is the wheel's file name: NAME-VERSION-TAGS.whl, the name
// normalised as the specification asks (runs of -_. become _, lower
// case).
func (w *Wheel) FileName() string {
	return w.distName() + "-" + w.Version + "-" + w.Tags + ".whl"
}

func (w *Wheel) distName() string {
	return strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(w.Name, "_"))
}

func (w *Wheel) check() error {
	switch {
	case !nameRE.MatchString(w.Name):
		return fmt.Errorf("wheel: %q is not a valid distribution name", w.Name)
	case !versionRE.MatchString(w.Version):
		return fmt.Errorf("wheel: %q is not a normalised PEP 440 version", w.Version)
	case !tagRE.MatchString(w.Tags):
		return fmt.Errorf("wheel: %q is not a tag set such as py3-none-manylinux_2_17_x86_64", w.Tags)
	case len(w.Scripts) == 0:
		return fmt.Errorf("wheel: no scripts to install")
	case w.Time.Year() < 1980:
		return fmt.Errorf("wheel: time %s is before 1980, which zip cannot store", w.Time.UTC().Format(time.RFC3339))
	}
	for _, f := range append(append([]File(nil), w.Scripts...), w.Licenses...) {
		if !baseRE.MatchString(f.Name) || f.Name == "." || f.Name == ".." {
			return fmt.Errorf("wheel: %q is not a plain file name", f.Name)
		}
	}
	for _, kv := range w.Metadata {
		if strings.ContainsAny(kv[0]+kv[1], "\r\n") || strings.Contains(kv[0], ":") {
			return fmt.Errorf("wheel: metadata field %q: a name without ':' and one-line values only", kv[0])
		}
	}
	return nil
}

// Write writes the wheel to out.
func (w *Wheel) Write(out io.Writer) error {
	if err := w.check(); err != nil {
		return err
	}
	stem := w.distName() + "-" + w.Version
	dataDir, infoDir := stem+".data", stem+".dist-info"
	type entry struct {
		name string
		data []byte
		mode uint32
	}
	var entries []entry
	for _, f := range w.Scripts {
		entries = append(entries, entry{dataDir + "/scripts/" + f.Name, f.Data, f.Mode})
	}
	entries = append(entries,
		entry{infoDir + "/METADATA", w.metadata(), 0o644},
		entry{infoDir + "/WHEEL", w.wheelFile(), 0o644})
	for _, f := range w.Licenses {
		entries = append(entries, entry{infoDir + "/" + f.Name, f.Data, 0o644})
	}
	var record bytes.Buffer
	for _, e := range entries {
		sum := sha256.Sum256(e.data)
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", csvField(e.name), base64.RawURLEncoding.EncodeToString(sum[:]), len(e.data))
	}
	fmt.Fprintf(&record, "%s,,\n", csvField(infoDir+"/RECORD"))
	entries = append(entries, entry{infoDir + "/RECORD", record.Bytes(), 0o644})

	zw := zip.NewWriter(out)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: w.Time.UTC()}
		h.SetMode(fs.FileMode(e.mode) & fs.ModePerm) // pip restores a script's executable bit from it
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return fmt.Errorf("wheel: %s: %w", e.name, err)
		}
		if _, err := fw.Write(e.data); err != nil {
			return fmt.Errorf("wheel: %s: %w", e.name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("wheel: %w", err)
	}
	return nil
}

// metadata is the METADATA file: core metadata 2.1 (what every pip,
// pipx and uv in use reads), an email-style header, then the description
// as the body.
func (w *Wheel) metadata() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "Metadata-Version: 2.1\nName: %s\nVersion: %s\n", w.Name, w.Version)
	for _, kv := range w.Metadata {
		fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
	}
	for _, f := range w.Licenses {
		fmt.Fprintf(&b, "License-File: %s\n", f.Name)
	}
	if w.DescriptionType != "" {
		fmt.Fprintf(&b, "Description-Content-Type: %s\n", w.DescriptionType)
	}
	if w.Description != "" {
		b.WriteString("\n")
		b.WriteString(w.Description)
		if !strings.HasSuffix(w.Description, "\n") {
			b.WriteString("\n")
		}
	}
	return b.Bytes()
}

// wheelFile is the WHEEL file: one Tag line for each tag the compressed
// set expands to.
func (w *Wheel) wheelFile() []byte {
	var b bytes.Buffer
	gen := w.Generator
	if gen == "" {
		gen = "pyattach wheel"
	}
	fmt.Fprintf(&b, "Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: false\n", gen)
	for _, t := range ExpandTags(w.Tags) {
		fmt.Fprintf(&b, "Tag: %s\n", t)
	}
	return b.Bytes()
}

// ExpandTags expands a compressed tag set ("py3-none-a.b") into its tags
// ("py3-none-a", "py3-none-b").
func ExpandTags(set string) []string {
	parts := strings.SplitN(set, "-", 3)
	if len(parts) != 3 {
		return nil
	}
	var out []string
	for _, py := range strings.Split(parts[0], ".") {
		for _, abi := range strings.Split(parts[1], ".") {
			for _, plat := range strings.Split(parts[2], ".") {
				out = append(out, py+"-"+abi+"-"+plat)
			}
		}
	}
	return out
}

// csvField quotes a RECORD path the way Python's csv module does when it
// must (a comma or a quote in it; never the case for the names above).
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}
