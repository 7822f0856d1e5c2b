package debuginfod

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pyattach/pyattach/detect/buildid"
	"github.com/pyattach/pyattach/venv/environ"
	"golang.org/x/sys/unix"
)

// Kinds of ELF file a server holds for a build-id.
const (
	KindDebuginfo  = "debuginfo"
	KindExecutable = "executable"
)

// Defaults, as elfutils has them.
const (
	DefaultTimeout  = 90 * time.Second
	DefaultParallel = 8
	// DefaultMaxSize bounds one download when DEBUGINFOD_MAXSIZE is
	// unset (elfutils has no bound): larger than any real debug file,
	// small enough that a server sending an endless answer cannot fill
	// the disk.
	DefaultMaxSize = 2 << 30
	// FreeMargin is the space a download leaves free on the cache's
	// file system.
	FreeMargin = 64 << 20
	// defaultCacheMiss is how long a negative entry holds when the cache
	// has no cache_miss_s file.
	defaultCacheMiss = 600 * time.Second
)

var (
	// ErrNotFound: every server answered 404, or a fresh negative cache
	// entry says so.
	ErrNotFound = errors.New("not found on any debuginfod server")
	// ErrTooLarge: the server's answer, as announced (Content-Length,
	// X-DEBUGINFOD-SIZE) or as received, exceeds the download limit
	// (Client.MaxSize). It is what elfutils reports as EFBIG.
	ErrTooLarge = errors.New("larger than the download limit")
	// ErrNoSpace: the answer, announced or received, would leave less
	// than FreeMargin free on the cache's file system.
	ErrNoSpace = errors.New("not enough free space in the cache")
	// ErrCut: the answer ended before the length it announced.
	ErrCut = errors.New("the download was cut short")
	// ErrWrongBuildID: the server sent an ELF file with another build-id,
	// or a file that is not ELF at all.
	ErrWrongBuildID = errors.New("wrong build-id")
	// ErrNoServers: no server to ask (DEBUGINFOD_URLS is empty).
	ErrNoServers = errors.New("no debuginfod servers (DEBUGINFOD_URLS is empty)")
	// ErrBadBuildID: the build-id is not lowercase hex of whole bytes
	// (buildid.ErrInvalid).
	ErrBadBuildID = buildid.ErrInvalid
	// ErrCacheNotWritable: the cache directory cannot take the download.
	// The message reads "cache dir DIR is not writable: ...".
	ErrCacheNotWritable = errors.New("not writable")
)

// Client fetches files from debuginfod servers into elfutils' cache. The
// zero value is usable (no servers, no cache: set URLs and CacheDir, or
// use FromEnv). A Client is safe for concurrent use; do not change its
// fields while it is in use.
type Client struct {
	// URLs are server base URLs, as ParseURLs returns them.
	URLs []string
	// CacheDir is elfutils' cache directory (CacheDirFromEnv).
	CacheDir string
	// Timeout: a request that does not move 100 KiB within Timeout,
	// starting with the connection, is abandoned. Zero: no limit.
	Timeout time.Duration
	// MaxSize bounds the size of one download, in bytes: an answer that
	// announces more is refused before it is read, one that sends more
	// is cut there (ErrTooLarge). Zero means DefaultMaxSize; negative,
	// no limit (DEBUGINFOD_MAXSIZE=0). Either way a download never
	// leaves less than FreeMargin free in the cache (ErrNoSpace).
	MaxSize int64
	// Parallel bounds how many build-ids are fetched at once (each one
	// asks every server at once). Zero means DefaultParallel.
	Parallel int
	// HTTP is the client used for requests; nil means one made for
	// this Client (proxies from the process environment, file:// URLs
	// served from the local file system). Leave its own Timeout zero:
	// Timeout above is the one that fits downloads of any size.
	HTTP *http.Client
	// Progress, when not nil, receives a progress bar of the bytes and
	// files being downloaded. Whether that is a terminal is the caller's
	// business; nil is quiet.
	Progress io.Writer
	// IgnoredURLs are DEBUGINFOD_URLS entries FromEnv could not use.
	IgnoredURLs []string

	// now is time.Now; tests move it.
	now func() time.Time
	// freeSpace is the space available to this user on the file system
	// of dir (statfs); tests fake it.
	freeSpace func(dir string) (int64, error)

	httpOnce    sync.Once
	defaultHTTP *http.Client
}

// FromEnv makes a Client the way elfutils' client reads its environment:
// DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH (else XDG_CACHE_HOME or HOME),
// DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXSIZE and DEBUGINFOD_PROGRESS. env is
// the environment, passed in (os.Environ in production); when a key
// repeats, the last one counts. When DEBUGINFOD_PROGRESS is set, the
// Client's Progress is progress (the caller's standard error, or nil for
// none). Finding the deprecated cache directory takes a stat of
// $HOME/.debuginfod_client_cache.
func FromEnv(env environ.Env, progress io.Writer) *Client {
	c := &Client{Parallel: DefaultParallel, Timeout: DefaultTimeout}
	v, _ := env.Lookup("DEBUGINFOD_URLS")
	c.URLs, c.IgnoredURLs = ParseURLs(v)
	c.CacheDir = CacheDirFromEnv(env, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
	if v, ok := env.Lookup("DEBUGINFOD_TIMEOUT"); ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			if n <= 0 {
				c.Timeout = 0
			} else if n < int64(1<<63-1)/int64(time.Second) {
				c.Timeout = time.Duration(n) * time.Second
			} else {
				c.Timeout = 0
			}
		}
	}
	if v, ok := env.Lookup("DEBUGINFOD_MAXSIZE"); ok {
		// As elfutils reads it: a positive number of bytes; 0 (or
		// less) asks for no limit. Anything else keeps the default.
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			c.MaxSize = max(n, -1)
			if n == 0 {
				c.MaxSize = -1
			}
		}
	}
	if _, ok := env.Lookup("DEBUGINFOD_PROGRESS"); ok {
		c.Progress = progress
	}
	return c
}

// CacheDirFromEnv returns elfutils' cache directory for env. exists says
// whether a path exists; it is asked about $HOME/.debuginfod_client_cache
// only.
func CacheDirFromEnv(env environ.Env, exists func(string) bool) string {
	if v, _ := env.Lookup("DEBUGINFOD_CACHE_PATH"); v != "" {
		return v
	}
	home, ok := env.Lookup("HOME")
	if !ok {
		home = "/"
	}
	if old := filepath.Join(home, ".debuginfod_client_cache"); exists != nil && exists(old) {
		return old
	}
	if xdg, _ := env.Lookup("XDG_CACHE_HOME"); xdg != "" {
		return filepath.Join(xdg, "debuginfod_client")
	}
	return filepath.Join(home, ".cache", "debuginfod_client")
}

// ParseURLs splits DEBUGINFOD_URLS into server base URLs. Entries are
// separated by white space. A URL without a scheme gets http:// (as
// libcurl reads it); a repeated URL is dropped, a trailing slash not
// counting as a difference. Entries that cannot be used (another scheme,
// no host, unparsable) come back in ignored, as written.
func ParseURLs(s string) (urls, ignored []string) {
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		u, ok := normalizeURL(f)
		if !ok {
			ignored = append(ignored, f)
			continue
		}
		key := strings.TrimSuffix(u, "/")
		if seen[key] {
			continue
		}
		seen[key] = true
		urls = append(urls, u)
	}
	return urls, ignored
}

func normalizeURL(s string) (string, bool) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return "", false
		}
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", false
		}
	default:
		return "", false
	}
	return s, true
}

// requestURL is base joined with /buildid/<id>/<rest>, the way elfutils
// joins them: one slash between, an existing trailing slash kept.
func requestURL(base, id, rest string) string {
	sep := "/"
	if len(base) > 1 && strings.HasSuffix(base, "/") {
		sep = ""
	}
	return base + sep + "buildid/" + id + "/" + rest
}

// CheckBuildID returns an error wrapping ErrBadBuildID unless id is a
// valid buildid.ID: lowercase hexadecimal of whole bytes, 1 to 64 of
// them. Every build-id is checked before it goes into a URL or a path.
func CheckBuildID(id string) error {
	_, err := buildid.Parse(id)
	return err
}

func checkKind(kind string) error {
	if kind != KindDebuginfo && kind != KindExecutable {
		return fmt.Errorf("unknown kind %q: want %q or %q", kind, KindDebuginfo, KindExecutable)
	}
	return nil
}

func (c *Client) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// maxSize is the download limit in bytes, or -1 for none.
func (c *Client) maxSize() int64 {
	switch {
	case c.MaxSize > 0:
		return c.MaxSize
	case c.MaxSize < 0:
		return -1
	}
	return DefaultMaxSize
}

// room is what a download into dir may write: the space available
// there less FreeMargin (at least 0), or -1 when it cannot be told.
func (c *Client) room(dir string) int64 {
	free := c.freeSpace
	if free == nil {
		free = statfsFree
	}
	n, err := free(dir)
	if err != nil {
		return -1
	}
	return max(n-FreeMargin, 0)
}

// statfsFree is the space available to an unprivileged user on dir's
// file system.
func statfsFree(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	if st.Bavail > uint64(1<<62)/uint64(max(st.Bsize, 1)) {
		return 1 << 62, nil
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

func (c *Client) parallel() int {
	if c.Parallel > 0 {
		return c.Parallel
	}
	return DefaultParallel
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	c.httpOnce.Do(func() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// Parallel downloads from one server reuse their connections.
		t.MaxIdleConnsPerHost = c.parallel()
		t.RegisterProtocol("file", http.NewFileTransport(http.Dir("/")))
		c.defaultHTTP = &http.Client{Transport: t}
	})
	return c.defaultHTTP
}
