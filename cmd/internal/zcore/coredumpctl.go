package zcore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Entry is one core coredumpctl lists (coredumpctl --json=short list).
type Entry struct {
	Time     int64  `json:"time"` // µs since the epoch
	PID      int    `json:"pid"`
	UID      int    `json:"uid"`
	Sig      int    `json:"sig"`
	CoreFile string `json:"corefile"` // "present", "missing", "none", "journal", ...
	Exe      string `json:"exe"`
	Size     int64  `json:"size"`
}

// maxListSize bounds coredumpctl's output pyattach reads.
const maxListSize = 16 << 20

// ParseList reads `coredumpctl --json=short list`.
func ParseList(b []byte) ([]Entry, error) {
	if len(b) > maxListSize {
		return nil, errors.New("coredumpctl's list is larger than 16 MiB")
	}
	var out []Entry
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("coredumpctl's list is not the JSON array expected: %v", err)
	}
	return out, nil
}

// Pick is the entry which (a PID, or "latest") names: the most recent
// of that PID, or of all.
func Pick(entries []Entry, which string) (Entry, bool) {
	var best Entry
	found := false
	for _, e := range entries {
		if which != "latest" && fmt.Sprint(e.PID) != which {
			continue
		}
		if !found || e.Time >= best.Time {
			best, found = e, true
		}
	}
	return best, found
}

// ParseStorage reads the core file's path from `coredumpctl info`: the
// last "Storage:" line ("Storage: PATH (present)"); "" when the core is
// not in a file (in the journal, or none).
func ParseStorage(info string) string {
	path := ""
	for _, l := range strings.Split(info, "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(l), "Storage:")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.LastIndex(v, " ("); i >= 0 && strings.HasSuffix(v, ")") {
			v = v[:i]
		}
		if strings.HasPrefix(v, "/") {
			path = v
		} else {
			path = ""
		}
	}
	return path
}
