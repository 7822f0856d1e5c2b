package dsym_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/dsym"
	"github.com/pyattach/pyattach/detect/machoinfo"
	"github.com/pyattach/pyattach/detect/testenv"
)

func info(t *testing.T, p string) *machoinfo.Info {
	t.Helper()
	i, err := machoinfo.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestLocate: lldb's order (beside, debug dirs, the store by UUID), a
// bundle of another build rejected with both UUIDs named, a universal
// module matched arch by arch, the debug map's objects as a last resort.
func TestLocate(t *testing.T) {
	fx := testenv.MachO(t)
	so := info(t, fx.SO)
	uuid := so.Arches[0].UUID

	got := (&dsym.Locator{}).Locate(fx.SO, so)
	if len(got) != 1 || got[0].Via != dsym.ViaBeside || got[0].DWARF != fx.DSYMDWARF || got[0].UUID != uuid {
		t.Fatalf("beside: %+v", got)
	}

	// A module alone; a debug dir with another build's bundle, then the
	// store with the right one.
	alone := filepath.Join(t.TempDir(), testenv.MachOName)
	testenv.CopyFile(t, fx.SO, alone, 0)
	dirs := t.TempDir()
	if err := os.Rename(fx.Other, filepath.Join(dirs, dsym.BundleName(alone))); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	inStore := dsym.StorePath(store, uuid, alone)
	if err := os.MkdirAll(filepath.Dir(inStore), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fx.DSYM, inStore); err != nil {
		t.Fatal(err)
	}
	got = (&dsym.Locator{DebugDirs: []string{dirs}, Store: store}).Locate(alone, so)
	if got[0].Via != dsym.ViaStore || got[0].Bundle != inStore {
		t.Errorf("store: %+v", got[0])
	}
	if len(got[0].Rejected) != 1 || !strings.Contains(got[0].Rejected[0].Reason, "want "+uuid) {
		t.Errorf("the other build's bundle: rejected %+v, want a UUID mismatch naming %s", got[0].Rejected, uuid)
	}

	// Without any bundle: the debug map of the linked file.
	linked := info(t, fx.Linked)
	got = (&dsym.Locator{}).Locate(fx.Linked, linked)
	if got[0].Via != dsym.ViaDebugMap || len(got[0].Objects) != 1 || got[0].Objects[0] != fx.Object {
		t.Errorf("debug map: %+v", got[0])
	}

	fat := info(t, fx.Fat)
	got = (&dsym.Locator{}).Locate(fx.Fat, fat)
	if len(got) != 2 {
		t.Fatalf("fat: %+v", got)
	}
	for i, f := range got {
		if f.Via != dsym.ViaBeside || f.UUID != fat.Arches[i].UUID || f.CPU != fat.Arches[i].CPU {
			t.Errorf("fat %s: %+v", fat.Arches[i].CPU, f)
		}
	}
}

// TestSymlinkOut: a bundle whose DWARF file is a link out of the bundle
// is refused, even when what it points at is the right DWARF.
func TestSymlinkOut(t *testing.T) {
	fx := testenv.MachO(t)
	so := info(t, fx.SO)
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Rename(fx.DSYMDWARF, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, fx.DSYMDWARF); err != nil {
		t.Fatal(err)
	}
	_, err := dsym.Check(fx.DSYM, fx.SO, "x86_64", so.Arches[0].UUID)
	if !errors.Is(err, dsym.ErrOutside) || !strings.Contains(err.Error(), outside) {
		t.Fatalf("Check: %v, want ErrOutside naming %s", err, outside)
	}
	got := (&dsym.Locator{}).Locate(fx.SO, so)
	if got[0].Via != dsym.ViaNone || len(got[0].Rejected) != 1 {
		t.Errorf("Locate: %+v, want the bundle rejected", got[0])
	}
}
