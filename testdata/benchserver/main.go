// Command benchserver is a minimal debuginfod-compatible server for
// benchmarks: it answers GET /buildid/<hex>/debuginfo from a set of ELF
// files, after a fixed delay per request, on a loopback address.
//
//	benchserver -dir DIR [-delay 100ms] [-addr 127.0.0.1:0] [FILE.debug...]
//
// DIR holds <hex>.debug files (the build-id is the name) or any ELF files
// (the build-id is read from their notes). The first line on standard
// output is the address it listens on, host:port. Build it from the
// repository root with
//
//	go build -o benchserver ./testdata/benchserver
package main

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

var hexDebugName = regexp.MustCompile(`^([0-9a-f]{2,})\.debug$`)

func main() {
	dir := flag.String("dir", "", "directory of <hex>.debug or ELF files")
	delay := flag.Duration("delay", 100*time.Millisecond, "delay before each answer")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("benchserver: ")

	var paths []string
	if *dir != "" {
		ents, err := os.ReadDir(*dir)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				paths = append(paths, filepath.Join(*dir, e.Name()))
			}
		}
	}
	paths = append(paths, flag.Args()...)
	index := map[string]string{} // build-id -> path
	for _, p := range paths {
		id := ""
		if m := hexDebugName.FindStringSubmatch(filepath.Base(p)); m != nil {
			id = m[1]
		} else {
			var err error
			if id, err = buildID(p); err != nil {
				log.Printf("skipping %s: %v", p, err)
				continue
			}
		}
		index[id] = p
	}
	if len(index) == 0 {
		log.Fatal("no ELF files to serve (use -dir or name files)")
	}

	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(l.Addr().String())
	os.Stdout.Sync()

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(*delay)
		rest, ok := strings.CutPrefix(r.URL.Path, "/buildid/")
		id, kind, _ := strings.Cut(rest, "/")
		p, found := index[id]
		if !ok || kind != "debuginfo" || !found {
			http.NotFound(w, r)
			return
		}
		f, err := os.Open(p)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("X-DEBUGINFOD-SIZE", fmt.Sprint(st.Size()))
		w.Header().Set("X-DEBUGINFOD-FILE", filepath.Base(p))
		http.ServeContent(w, r, "", st.ModTime(), f)
	})
	log.Fatal(http.Serve(l, h))
}

// buildID reads the GNU build-id note of the ELF file at p.
func buildID(p string) (string, error) {
	f, err := elf.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		b, err := s.Data()
		if err != nil {
			continue
		}
		for len(b) >= 12 {
			namesz := f.ByteOrder.Uint32(b[0:])
			descsz := f.ByteOrder.Uint32(b[4:])
			typ := f.ByteOrder.Uint32(b[8:])
			nameEnd := 12 + align4(uint64(namesz))
			descEnd := nameEnd + align4(uint64(descsz))
			if descEnd > uint64(len(b)) {
				break
			}
			name := bytes.TrimRight(b[12:12+uint64(namesz)], "\x00")
			if string(name) == "GNU" && typ == 3 && descsz > 0 {
				return hex.EncodeToString(b[nameEnd : nameEnd+uint64(descsz)]), nil
			}
			b = b[descEnd:]
		}
	}
	return "", fmt.Errorf("no GNU build-id note")
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }
