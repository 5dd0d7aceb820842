package driver

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOwnerMarker(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("owners are told apart through /proc")
	}
	me, err := SelfOwner()
	if err != nil {
		t.Fatal(err)
	}
	if me.PID != os.Getpid() || me.Start == 0 || me.Boot == "" || me.PIDNS == "" {
		t.Fatalf("self %+v", me)
	}
	// Above the kernel's PID_MAX_LIMIT (4194304): never a live process.
	const deadPID = 1 << 23
	cases := []struct {
		name  string
		owner Owner
		alive bool
	}{
		{"this process", me, true},
		{"gone", Owner{PID: deadPID, Start: me.Start, Boot: me.Boot, PIDNS: me.PIDNS}, false},
		{"PID reused by a later process", Owner{PID: me.PID, Start: me.Start - 1, Boot: me.Boot, PIDNS: me.PIDNS}, false},
		{"an earlier boot", Owner{PID: me.PID, Start: me.Start, Boot: "00000000-0000-0000-0000-000000000000", PIDNS: me.PIDNS}, false},
		{"another PID namespace: cannot tell", Owner{PID: deadPID, Start: me.Start, Boot: me.Boot, PIDNS: "pid:[1]"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteOwner(dir, tc.owner); err != nil {
				t.Fatal(err)
			}
			got, err := ReadOwner(dir)
			if err != nil || got != tc.owner {
				t.Fatalf("read back %+v, %v; wrote %+v", got, err, tc.owner)
			}
			if got.Alive() != tc.alive {
				t.Fatalf("Alive() = %v, want %v", got.Alive(), tc.alive)
			}
			if err := WriteOwner(dir, me); err == nil {
				t.Fatal("a second marker overwrote the first")
			}
		})
	}
}

func TestReadOwnerRefuses(t *testing.T) {
	marked := func(t *testing.T) string {
		dir := t.TempDir()
		if err := MarkOwned(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	cases := []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"no marker", func(t *testing.T) string { return t.TempDir() }},
		{"missing dir", func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope") }},
		{"marker cut short", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, OwnerFile), []byte(ownerHeader+"\npid 12\nstart 3\nboot x\npid"), 0o600)
			return dir
		}},
		{"foreign file", func(t *testing.T) string {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, OwnerFile), []byte("pid 12\nstart 3\nboot x\n"), 0o600)
			return dir
		}},
		{"symlink to a marked dir", func(t *testing.T) string {
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(marked(t), link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{"another user's", func(t *testing.T) string {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a directory away")
			}
			dir := marked(t)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
		{"marker is a symlink", func(t *testing.T) string {
			dir := t.TempDir()
			if err := os.Symlink(filepath.Join(marked(t), OwnerFile), filepath.Join(dir, OwnerFile)); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if o, err := ReadOwner(tc.dir(t)); !errors.Is(err, ErrNoOwner) {
				t.Fatalf("ReadOwner = %+v, %v; want ErrNoOwner", o, err)
			}
		})
	}
}
