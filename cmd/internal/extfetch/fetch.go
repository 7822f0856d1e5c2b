// Package extfetch downloads CPython's gdb extension, libpython.py, for
// an exact CPython tag into pyattach's cache, with its SHA-256 beside it,
// where detect/pyext finds it (pyext.FetchedPath) and checks it
// (pyext.PinSuffix, pyext.Pin) before a debugger may run it.
//
// It is the writer and the network client of `pyattach fetch-extension`
// (the command's room, cmd/internal); finding an extension, fetched or
// installed, is a fact about the target and stays in detect/pyext.
package extfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pyattach/pyattach/cmd/internal/safefs"
	"github.com/pyattach/pyattach/detect/pyext"
)

// DefaultBaseURL serves CPython's files by tag:
// <DefaultBaseURL>/v<X.Y.Z>/Tools/gdb/libpython.py.
const DefaultBaseURL = "https://raw.githubusercontent.com/python/cpython"

// ErrNoSuchVersion is wrapped by Fetch's error when the server has no
// libpython.py for the version (HTTP 404).
var ErrNoSuchVersion = errors.New("no such CPython version")

// ErrInvalidVersion is wrapped by Fetch's error when the version cannot
// name a CPython tag (it needs X.Y.Z).
var ErrInvalidVersion = errors.New("invalid CPython version")

// ErrInsecureURL is wrapped by CheckBaseURL's error (and Fetch's) for a
// URL that is not https, or plain http to a host other than loopback.
var ErrInsecureURL = errors.New("insecure URL")

// CheckBaseURL accepts an https URL, and a plain http URL whose host is
// loopback (localhost, 127.0.0.0/8, ::1), which only this machine can
// answer. What is downloaded lands in the cache that every later gdb
// run sources, so nothing on the network path may choose it.
func CheckBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrInsecureURL, raw, err)
	}
	switch {
	case u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return fmt.Errorf("%w: %q is not an https:// URL", ErrInsecureURL, raw)
	case u.Scheme == "http" && !loopbackHost(u.Hostname()):
		return fmt.Errorf("%w: %q is plain http, which anyone on the network path can answer (http is allowed only for localhost, 127.0.0.0/8 and ::1)", ErrInsecureURL, raw)
	}
	return nil
}

func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Fetch downloads CPython's gdb extension for the exact version
// (X.Y.Z, or a pre-release such as 3.13.0rc1) from
// <baseURL>/v<version>/Tools/gdb/libpython.py, checks that it is
// libpython.py and at most pyext.MaxFetchSize bytes, and stores it at
// pyext.FetchedPath (<cacheDir>/extensions/<version>/libpython.py, mode
// 0644) through a temporary file renamed into place, with its SHA-256
// beside it (libpython.py.sha256), which pyext.FindGDB checks before
// using the copy. It returns that path. On failure
// nothing is left behind: no temporary file and no directory it made.
// A nil client means http.DefaultClient. baseURL, and every redirect
// followed, must pass CheckBaseURL.
func Fetch(ctx context.Context, client *http.Client, baseURL, version, cacheDir string) (string, error) {
	if !pyext.ExactVersion(version) {
		return "", fmt.Errorf("fetch extension for %q: %w: a CPython tag needs major.minor.micro, such as 3.12.1", version, ErrInvalidVersion)
	}
	if cacheDir == "" {
		return "", errors.New("fetch extension: no cache directory")
	}
	if err := CheckBaseURL(baseURL); err != nil {
		return "", fmt.Errorf("fetch extension: %w", err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	// A redirect must obey the same rule as the URL itself.
	c := *client
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := CheckBaseURL(req.URL.String()); err != nil {
			return fmt.Errorf("redirected: %w", err)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	client = &c
	url := strings.TrimRight(baseURL, "/") + "/v" + version + "/Tools/gdb/libpython.py"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("fetch extension %s: %w", url, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("fetch extension: %w", err) // *url.Error names the URL
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return "", fmt.Errorf("fetch extension: CPython has no tag v%s, or no Tools/gdb/libpython.py in it (GET %s: %s): %w", version, url, resp.Status, ErrNoSuchVersion)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("fetch extension: GET %s: %s", url, resp.Status)
	case resp.ContentLength > pyext.MaxFetchSize:
		return "", fmt.Errorf("fetch extension: GET %s: %d bytes, more than the %d allowed", url, resp.ContentLength, pyext.MaxFetchSize)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, pyext.MaxFetchSize+1))
	if err != nil {
		return "", fmt.Errorf("fetch extension: GET %s: %w", url, err)
	}
	if len(body) > pyext.MaxFetchSize {
		return "", fmt.Errorf("fetch extension: GET %s: more than the %d bytes allowed", url, pyext.MaxFetchSize)
	}
	if !pyext.IsLibpython(body) {
		return "", fmt.Errorf("fetch extension: GET %s: the response is not CPython's libpython.py (no class PyObjectPtr)", url)
	}
	final := pyext.FetchedPath(cacheDir, version)
	return store(filepath.Dir(final), filepath.Base(final), body)
}

// store writes data to dir/name atomically (safefs.WriteFile), creating
// dir as needed; on failure it removes the directories it made.
func store(dir, name string, data []byte) (_ string, err error) {
	made, err := mkdirAllTracked(dir)
	defer func() {
		if err != nil {
			for i := len(made) - 1; i >= 0; i-- {
				os.Remove(made[i]) // only empty directories go
			}
		}
	}()
	if err != nil {
		return "", fmt.Errorf("fetch extension: %w", err)
	}
	final := filepath.Join(dir, name)
	// The hash first: a copy is never without its record, and a
	// record without its copy names nothing.
	if err := safefs.WriteFile(final+pyext.PinSuffix, pyext.Pin(data), 0o644); err != nil {
		return "", fmt.Errorf("fetch extension: write %s: %w", final+pyext.PinSuffix, err)
	}
	if err := safefs.WriteFile(final, data, 0o644); err != nil {
		os.Remove(final + pyext.PinSuffix)
		return "", fmt.Errorf("fetch extension: write %s: %w", final, err)
	}
	return final, nil
}

// mkdirAllTracked is os.MkdirAll(dir, 0o700) that returns the
// directories it created, outermost first.
func mkdirAllTracked(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !os.IsNotExist(err) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o700)
		switch {
		case err == nil:
			made = append(made, missing[i])
		case !os.IsExist(err):
			return made, err
		}
	}
	return made, nil
}
