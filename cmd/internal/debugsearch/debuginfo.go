package debugsearch

import (
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/detect/debugfile"
	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/elfinfo"
)

// Info is what `pyattach debuginfo --json` prints: for one target, where
// each module's debug information is, the debug directories and
// debuginfod servers searched, and the debugger extensions found.
type Info struct {
	Target      string         `json:"target"`
	PID         int            `json:"pid,omitempty"`
	Interpreter string         `json:"interpreter"`
	Python      *target.Python `json:"python"`
	Container   bool           `json:"container"`
	DebugDirs   []string       `json:"debug_dirs"`
	// ContainerDebugDirs are the debug directories searched under a
	// container's root, before DebugDirs: as the process sees them and
	// where they were read from.
	ContainerDebugDirs []debugfile.SearchedDir `json:"container_debug_dirs,omitempty"`
	Debuginfod         DebuginfodState         `json:"debuginfod"`
	Modules            []Module                `json:"modules"`
	Extensions         Extensions              `json:"extensions"`
	Warnings           []string                `json:"warnings,omitempty"`
}

// DebuginfodState says whether servers were asked.
type DebuginfodState struct {
	URLs    []string `json:"urls"`
	Cache   string   `json:"cache"`
	Offline bool     `json:"offline"`
}

// Module is one module and where its debug information is.
type Module struct {
	Path         string             `json:"path"`
	BuildID      string             `json:"build_id"`
	DebugLink    *elfinfo.DebugLink `json:"debuglink"`
	DebugAltLink *elfinfo.AltLink   `json:"debugaltlink"`
	Debug        debugfile.Found    `json:"debug"`
	// MachO is set for a Mach-O module (macOS): its UUID and .dSYM per
	// architecture. BuildID, DebugLink and DebugAltLink are then empty,
	// and Debug sums up the first architecture.
	MachO *MachO `json:"macho,omitempty"`
	Error string `json:"error,omitempty"`
}

// MachO is where a Mach-O module's DWARF is, architecture by
// architecture (detect/dsym's answer).
type MachO struct {
	Universal bool         `json:"universal"`
	Arches    []dsym.Found `json:"arches"`
}

// Extensions are the CPython debugger extensions for the interpreter.
type Extensions struct {
	GDB             string   `json:"gdb"`
	GDBVersion      string   `json:"gdb_version"`
	GDBVersionMatch bool     `json:"gdb_version_match"`
	GDBSource       string   `json:"gdb_source,omitempty"`
	GDBWarnings     []string `json:"gdb_warnings,omitempty"`
	GDBTried        []string `json:"gdb_tried,omitempty"`
	LLDB            string   `json:"lldb"`
	LLDBTried       []string `json:"lldb_tried,omitempty"`
}
