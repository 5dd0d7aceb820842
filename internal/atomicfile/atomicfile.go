// Package atomicfile writes a file whole: into a temporary file in the
// same directory, renamed over the target once complete, so a reader (or a
// process that starts meanwhile) sees the old file or the new one, never
// a part.
package atomicfile

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write writes, with mode perm;
// the directory must exist. Nothing is left behind when it fails.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone once renamed; left over on a failure
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteBytes is Write of b.
func WriteBytes(path string, perm fs.FileMode, b []byte) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
