package zcore

import (
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// Name is what a systemd-coredump file name says:
// core.COMM.UID.BOOTID.PID.USEC[.zst|.lz4|.xz], COMM with "\xHH"
// escapes (a dot is "\x2e").
type Name struct {
	// Comm is the process's command name (unescaped; it is the
	// debuggee's: escape it before printing).
	Comm   string    `json:"comm"`
	UID    int       `json:"uid"`
	BootID string    `json:"boot_id"`
	PID    int       `json:"pid"`
	Time   time.Time `json:"time"`
}

// ParseName reads base, a file's base name, as systemd-coredump names
// its cores; false when it is not such a name.
func ParseName(base string) (Name, bool) {
	var n Name
	s, ok := strings.CutPrefix(base, "core.")
	if !ok {
		return n, false
	}
	for _, ext := range []string{".zst", ".lz4", ".xz"} {
		if t, ok := strings.CutSuffix(s, ext); ok {
			s = t
			break
		}
	}
	f := strings.Split(s, ".")
	if len(f) < 5 {
		return n, false
	}
	k := len(f)
	usec, err1 := strconv.ParseUint(f[k-1], 10, 63)
	pid, err2 := strconv.ParseUint(f[k-2], 10, 31)
	boot := f[k-3]
	uid, err3 := strconv.ParseUint(f[k-4], 10, 32)
	if err1 != nil || err2 != nil || err3 != nil || pid == 0 || len(boot) != 32 || !isHex(boot) {
		return n, false
	}
	comm, ok := unescape(strings.Join(f[:k-4], "."))
	if !ok || comm == "" {
		return n, false
	}
	n.Comm, n.UID, n.BootID, n.PID = comm, int(uid), boot, int(pid)
	n.Time = time.UnixMicro(int64(usec)).UTC()
	return n, true
}

// isHex says whether s is lowercase hex digits, as systemd writes a boot
// ID.
func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// unescape undoes systemd's "\xHH" escapes; false for a malformed one.
func unescape(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 >= len(s) || s[i+1] != 'x' {
			return "", false
		}
		v, err := strconv.ParseUint(s[i+2:i+4], 16, 8)
		if err != nil {
			return "", false
		}
		b.WriteByte(byte(v))
		i += 3
	}
	return b.String(), true
}
