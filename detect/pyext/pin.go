package pyext

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// RefusedInRoot is the reason an extension under a foreign target's
// root (Input.Foreign) is not used, as listed in tried.
const RefusedInRoot = "refused: it is inside the target's root, which the target controls whoever owns it there; a file reached through a debuggee's root is never debugger code"

// MaxFetchSize bounds a fetched extension; libpython.py is about 70 KB.
const MaxFetchSize = 4 << 20

// PinSuffix names the file beside a fetched extension that records its
// SHA-256 (Pin), written with the extension by cmd/internal/extfetch.
// The record is written there and checked here (checkPinned): its
// format is this file's.
const PinSuffix = ".sha256"

// FetchedPath is where a fetched copy of libpython.py for the exact
// version lives in pyattach's cache directory (Input.CacheDir):
// <cacheDir>/extensions/<X.Y.Z>/libpython.py, where FindGDB looks.
func FetchedPath(cacheDir, version string) string {
	return filepath.Join(cacheDir, "extensions", version, "libpython.py")
}

// IsLibpython reports whether data, the start of a file or the whole
// of it, is CPython's libpython.py as FindGDB accepts one.
func IsLibpython(data []byte) bool {
	if len(data) > sniffSize {
		data = data[:sniffSize]
	}
	return looksLikeLibpython(data)
}

// ExactVersion reports whether version can name a CPython tag
// (X.Y.Z, or a pre-release such as 3.13.0rc1).
func ExactVersion(version string) bool { return exactVersion(version) }

// maxPinned bounds the read of a cached extension for its hash.
const maxPinned = MaxFetchSize + 1

// checkPinned says why the cached extension at host may not be used, or
// "": its content must hash to the SHA-256 recorded when it was
// fetched. A copy without a record (fetched by an older pyattach) is
// accepted unless required is set (a foreign target).
func checkPinned(host string, required bool) string {
	want, err := os.ReadFile(host + PinSuffix)
	if err != nil {
		if required {
			return "refused for this target: no SHA-256 was recorded when it was fetched; run pyattach fetch-extension again"
		}
		return ""
	}
	got, err := fileSHA256(host)
	if err != nil {
		return "refused: " + errText(err)
	}
	if strings.TrimSpace(string(want)) != got {
		return fmt.Sprintf("refused: its SHA-256 is %s, not the %s recorded when it was fetched (changed since); run pyattach fetch-extension again", got, strings.TrimSpace(string(want)))
	}
	return ""
}

// fileSHA256 is the hex SHA-256 of a file of at most MaxFetchSize bytes.
func fileSHA256(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, maxPinned))
	if err != nil {
		return "", err
	}
	if n > MaxFetchSize {
		return "", fmt.Errorf("%s is larger than any libpython.py (%d bytes at most)", p, MaxFetchSize)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Pin is the record written beside a fetched extension (in the file
// named by PinSuffix): its SHA-256 in hex, one line.
func Pin(data []byte) []byte {
	sum := sha256.Sum256(data)
	return []byte(hex.EncodeToString(sum[:]) + "\n")
}
