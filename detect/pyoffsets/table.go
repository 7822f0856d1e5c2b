package pyoffsets

import (
	_ "embed"
	"encoding/json"
	"sort"
	"sync"

	"github.com/pyattach/pyattach/detect/pyversion"
)

// A Table is one minor version's offsets, for one set of layout flags.
type Table struct {
	// Key is the minor version and layout flags: "3.11", "3.11d".
	Key string `json:"key"`
	// From names the build the table was generated from.
	From From `json:"generated_from"`
	// Fields maps "Type.member" to a byte offset, "Type.member:bit_offset"
	// and ":bit_size" for bit fields, "sizeof(Type)" to a size, and
	// "Enum.CONSTANT" to the value of a constant of a C enum (see enums).
	Fields map[string]int64 `json:"fields"`
}

// From identifies a build without naming a machine's paths.
type From struct {
	Version string `json:"version"`
	File    string `json:"file"`
	BuildID string `json:"build_id"`
}

// File is what offsets.json holds.
type File struct {
	Tables []Table `json:"tables"`
}

//go:embed offsets.json
var raw []byte

var (
	once   sync.Once
	tables map[string]Table
)

// Raw is offsets.json as generated, for the debugger extension.
func Raw() []byte { return raw }

// Lookup returns the table for a minor version and layout flags
// ("3.11", "d").
func Lookup(minorVersion, flags string) (Table, bool) {
	once.Do(func() {
		tables = map[string]Table{}
		for _, t := range All() {
			tables[t.Key] = t
		}
	})
	t, ok := tables[minorVersion+layoutFlags(flags)]
	return t, ok
}

// SortTables orders tables by version, then flags.
func SortTables(ts []Table) {
	sort.Slice(ts, func(i, j int) bool {
		a, errA := pyversion.Parse(ts[i].Key)
		b, errB := pyversion.Parse(ts[j].Key)
		if errA != nil || errB != nil {
			return errA == nil && errB != nil || errA != nil && errB != nil && ts[i].Key < ts[j].Key
		}
		return a.Compare(b) < 0
	})
}

// All returns every table, in version order.
func All() []Table {
	var f File
	if json.Unmarshal(raw, &f) != nil {
		return nil
	}
	return f.Tables
}

// Supported reports whether the walker can read an interpreter of this
// version ("3.11.2") and ABI flags: 3.7 or later (it starts from
// _PyRuntime), with a table, or 3.13 or later, whose _PyRuntime carries
// its own offsets (_Py_DebugOffsets).
func Supported(version, flags string) bool {
	v, err := pyversion.Parse(version)
	if err != nil || !v.HasMinor() || v.Major() != 3 || !v.AtLeast(3, 7) {
		// 3.6 and older have no _PyRuntime to start from.
		return false
	}
	if _, ok := Lookup(v.MajorMinor(), flags); ok {
		return true
	}
	return v.AtLeast(3, 13)
}
