package idcache

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/detect/saferead"
)

// FileName is the cache file's name in pyattach's cache directory.
const FileName = "buildids"

// header is the first line of the cache file; a file with another one
// (an older or newer format) is ignored and rewritten.
const header = "pyattach build-ids 1\n"

// Bounds of the cache file.
const (
	MaxEntries  = 4096
	MaxFileSize = 1 << 20
)

// Key is a file's identity as the file system gives it.
type Key struct {
	Dev, Ino     uint64
	Size         int64
	Mtime, Ctime int64 // nanoseconds since the epoch
}

// Value is what is known of a file's build-id: its ID, or that it has
// none (an ELF file without the note, or a file that is not ELF).
type Value struct {
	ID     buildid.ID // "" when the file has none
	NotELF bool       // the file does not start with the ELF magic
}

// Entry is one line of the cache file.
type Entry struct {
	Key
	Value
}

// KeyOf is the key of the file st describes; false when the system
// gives no device, inode and times (then nothing is cached).
func KeyOf(st fs.FileInfo) (Key, bool) {
	if st == nil || !st.Mode().IsRegular() {
		return Key{}, false
	}
	return keyOf(st)
}

// Parse reads the entries of a cache file. Lines it cannot read (a
// number out of range, a build-id that is not lowercase hex of 1 to 64
// bytes, too few or too many fields) are skipped; a wrong header gives
// no entries at all. It never panics and returns at most MaxEntries
// entries, the first ones.
func Parse(b []byte) []Entry {
	rest, ok := bytes.CutPrefix(b, []byte(header))
	if !ok {
		return nil
	}
	var out []Entry
	for len(rest) > 0 && len(out) < MaxEntries {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil // a last line without its newline was cut short
			break
		}
		if e, ok := parseLine(string(line)); ok {
			out = append(out, e)
		}
	}
	return out
}

func parseLine(line string) (Entry, bool) {
	f := strings.Split(line, " ")
	if len(f) != 6 {
		return Entry{}, false
	}
	var nums [5]uint64
	for i := range nums {
		n, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return Entry{}, false
		}
		nums[i] = n
	}
	if nums[2] > 1<<62 {
		return Entry{}, false
	}
	e := Entry{Key: Key{Dev: nums[0], Ino: nums[1], Size: int64(nums[2]), Mtime: int64(nums[3]), Ctime: int64(nums[4])}}
	switch v := f[5]; v {
	case "-":
	case "!":
		e.NotELF = true
	default:
		id, err := buildid.Parse(v)
		if err != nil {
			return Entry{}, false
		}
		e.ID = id
	}
	return e, true
}

// Encode writes entries in the format Parse reads.
func Encode(entries []Entry) []byte {
	b := make([]byte, 0, len(header)+len(entries)*96)
	b = append(b, header...)
	for _, e := range entries {
		b = strconv.AppendUint(b, e.Dev, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, e.Ino, 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(e.Size), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(e.Mtime), 10)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(e.Ctime), 10)
		b = append(b, ' ')
		switch {
		case e.NotELF:
			b = append(b, '!')
		case e.ID == "":
			b = append(b, '-')
		default:
			b = append(b, e.ID...)
		}
		b = append(b, '\n')
	}
	return b
}

// Cache is the build-ids of files seen before, safe for concurrent use.
// The zero Cache and a nil *Cache remember nothing and save nothing.
type Cache struct {
	path string // "" when nothing is saved

	mu    sync.Mutex
	m     map[Key]Value
	order []Key        // the file's entries, in its order
	used  map[Key]bool // looked up or stored in this run
	dirty bool
}

// Open reads the cache in dir, pyattach's private cache directory (see
// safefs.PrivateDir), for the effective user. A cache file that is
// missing, unreadable or untrusted (see the package documentation) reads
// as empty; Save then writes a new one. A dir of "" gives a cache that
// lives as long as the process.
func Open(dir string) *Cache {
	c := &Cache{m: map[Key]Value{}, used: map[Key]bool{}}
	if dir == "" {
		return c
	}
	c.path = filepath.Join(dir, FileName)
	b, err := readTrusted(c.path, os.Geteuid())
	if err != nil {
		return c
	}
	for _, e := range Parse(b) {
		if _, dup := c.m[e.Key]; dup {
			continue
		}
		c.m[e.Key] = e.Value
		c.order = append(c.order, e.Key)
	}
	return c
}

// errUntrusted says why a cache file is not read.
var errUntrusted = errors.New("cache file not trusted")

// readTrusted reads the cache file at path when it is a regular file
// owned by uid, not writable by group or others, and at most
// MaxFileSize bytes long.
func readTrusted(path string, uid int) ([]byte, error) {
	f, st, err := saferead.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if owner, ok := ownerOf(st); !ok || owner != uid || st.Mode().Perm()&0o022 != 0 {
		return nil, errUntrusted
	}
	if st.Size() > MaxFileSize {
		return nil, errUntrusted
	}
	return io.ReadAll(io.LimitReader(f, MaxFileSize))
}

// Lookup returns what is cached for k.
func (c *Cache) Lookup(k Key) (Value, bool) {
	if c == nil {
		return Value{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	if ok {
		c.used[k] = true
	}
	return v, ok
}

// Store records v for k.
func (c *Cache) Store(k Key, v Value) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok && old == v {
		c.used[k] = true
		return
	}
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
	}
	c.m[k] = v
	c.used[k] = true
	c.dirty = true
}

// Entries returns what Save would write: the entries used in this run
// first, then the others in the file's order, at most MaxEntries.
func (c *Cache) Entries() []Entry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Entry, 0, min(len(c.order), MaxEntries))
	for _, pass := range []bool{true, false} {
		for _, k := range c.order {
			if c.used[k] == pass && len(out) < MaxEntries {
				out = append(out, Entry{Key: k, Value: c.m[k]})
			}
		}
	}
	return out
}

// Save writes the cache file when this run stored something new.
func (c *Cache) Save() error {
	if c == nil || c.path == "" {
		return nil
	}
	c.mu.Lock()
	dirty := c.dirty
	c.mu.Unlock()
	if !dirty {
		return nil
	}
	if err := safefs.WriteFile(c.path, Encode(c.Entries()), 0o600); err != nil {
		return err
	}
	c.mu.Lock()
	c.dirty = false
	c.mu.Unlock()
	return nil
}
