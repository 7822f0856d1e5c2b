package proc

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkReadMapsAndModules reads /proc/self/maps (of the test binary)
// and picks its modules, as pyattach does for its target.
func BenchmarkReadMapsAndModules(b *testing.B) {
	p := New("/proc")
	pid := os.Getpid()
	for b.Loop() {
		maps, err := p.Maps(pid)
		if err != nil {
			b.Fatal(err)
		}
		if len(Modules(maps)) == 0 {
			b.Fatal("no modules")
		}
	}
}

// BenchmarkParseMaps parses the maps of a python3.11 process from memory.
func BenchmarkParseMaps(b *testing.B) {
	data, err := os.ReadFile("testdata/python3.11-deleted.maps")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseMaps(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProcess reads the test binary's own process.
func BenchmarkProcess(b *testing.B) {
	p := New("/proc")
	pid := os.Getpid()
	for b.Loop() {
		if _, err := p.Process(pid); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChildren scans every process of the machine.
func BenchmarkChildren(b *testing.B) {
	p := New("/proc")
	for b.Loop() {
		if _, err := p.Children(1); err != nil {
			b.Fatal(err)
		}
	}
}
