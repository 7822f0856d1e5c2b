package core

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenInErrors(t *testing.T) {
	name := filepath.Join(t.TempDir(), "core")
	if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := OpenIn(name, "")
	var oe *OpenError
	if !errors.As(err, &oe) || !oe.NotCore() || oe.Path != name || !strings.Contains(err.Error(), name) {
		t.Errorf("OpenIn(not a core) = %v", err)
	}
	missing := &OpenError{Path: "c", Exe: "/gone", Err: os.ErrNotExist}
	if missing.NotCore() || !strings.Contains(missing.Error(), "/gone") || !errors.Is(missing, os.ErrNotExist) {
		t.Errorf("missing executable: %v", missing)
	}
	if none := (&OpenError{Path: "c"}); none.NotCore() || none.Error() != "core c does not name its executable" {
		t.Errorf("no executable: %v", none)
	}
}
