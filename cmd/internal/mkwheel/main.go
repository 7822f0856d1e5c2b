// Command mkwheel writes pyattach's wheel for one platform; it is run by
// scripts/package.sh only (go run ./cmd/internal/mkwheel), never shipped.
//
//	mkwheel -version 0.3.0 -tags py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64 \
//	        -binary dist/x/pyattach -readme README.md -license LICENSE -mtime 1700000000 -o dist
//
// It prints the path of the wheel it wrote.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/cmd/internal/wheel"
)

type fields [][2]string

func (f *fields) String() string { return fmt.Sprint(*f) }
func (f *fields) Set(s string) error {
	k, v, ok := strings.Cut(s, ": ")
	if !ok {
		return fmt.Errorf("%q is not \"Field: value\"", s)
	}
	*f = append(*f, [2]string{k, v})
	return nil
}

func main() {
	var meta fields
	name := flag.String("name", "pyattach", "distribution name")
	version := flag.String("version", "", "PEP 440 version")
	tags := flag.String("tags", "", "compressed tag set, such as py3-none-manylinux_2_17_x86_64")
	binary := flag.String("binary", "", "the program to install on PATH")
	readme := flag.String("readme", "README.md", "long description (Markdown)")
	license := flag.String("license", "LICENSE", "licence file")
	mtime := flag.Int64("mtime", 315532800, "time stamp of every file, in seconds since 1970 (SOURCE_DATE_EPOCH)")
	out := flag.String("o", ".", "directory to write the wheel into")
	flag.Var(&meta, "meta", "a metadata field, \"Field: value\" (repeatable)")
	flag.Parse()
	if err := run(*name, *version, *tags, *binary, *readme, *license, *mtime, *out, meta); err != nil {
		fmt.Fprintf(os.Stderr, "mkwheel: error: %v\n", err)
		os.Exit(1)
	}
}

func run(name, version, tags, binary, readme, license string, mtime int64, out string, meta fields) error {
	if binary == "" {
		return fmt.Errorf("-binary is required")
	}
	bin, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	desc, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	lic, err := os.ReadFile(license)
	if err != nil {
		return err
	}
	w := &wheel.Wheel{
		Name:            name,
		Version:         version,
		Tags:            tags,
		Metadata:        meta,
		Description:     string(desc),
		DescriptionType: "text/markdown",
		Scripts:         []wheel.File{{Name: filepath.Base(binary), Data: bin, Mode: 0o755}},
		Licenses:        []wheel.File{{Name: filepath.Base(license), Data: lic, Mode: 0o644}},
		Generator:       "pyattach mkwheel (scripts/package.sh)",
		Time:            time.Unix(mtime, 0),
	}
	var buf bytes.Buffer
	if err := w.Write(&buf); err != nil {
		return err
	}
	path := filepath.Join(out, w.FileName())
	if err := safefs.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
