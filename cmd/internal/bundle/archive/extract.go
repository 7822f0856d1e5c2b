package archive

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// Extract writes the entries of a bundle that Verify accepted into dir,
// a directory it creates (it must not exist): dir/manifest.json and
// dir/<name> for every entry. The checks of Verify are made again as it
// reads (the file could have changed); on any error dir is removed.
// Writes go through an os.Root on dir, so that nothing lands outside it
// whatever a name says.
func Extract(r io.Reader, dir string, max int64) (_ *Manifest, err error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	m, err := walk(r, max, func(e Entry, data io.Reader) error {
		if d := path.Dir(e.Name); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		f, err := root.OpenFile(e.Name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			if errors.Is(err, fs.ErrExist) {
				return refuse(e.Name, "written twice")
			}
			return err
		}
		if _, err := io.Copy(f, data); err != nil {
			f.Close()
			return err
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		return nil, err
	}
	mf, err := root.OpenFile(ManifestName, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, err
	}
	if err := writeManifest(mf, m); err != nil {
		mf.Close()
		return nil, fmt.Errorf("write %s: %w", ManifestName, err)
	}
	if err := mf.Close(); err != nil {
		return nil, err
	}
	return m, nil
}
