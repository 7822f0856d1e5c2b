package pywalk

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/detect/pyoffsets"
	"github.com/pyattach/pyattach/detect/testenv"
)

// structMembers is the byte offset of each member of the struct named
// name (a typedef's struct too) in d, nil when d has none.
func structMembers(t *testing.T, d *dwarf.Data, name string) map[string]int64 {
	t.Helper()
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return nil
		}
		if e.Tag != dwarf.TagStructType || e.Val(dwarf.AttrName) != name || !e.Children {
			if e.Children && e.Tag != dwarf.TagCompileUnit {
				r.SkipChildren()
			}
			continue
		}
		out := map[string]int64{}
		for {
			c, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if c == nil || c.Tag == 0 {
				break
			}
			if c.Tag == dwarf.TagMember {
				if n, ok := c.Val(dwarf.AttrName).(string); ok {
					if off, ok := c.Val(dwarf.AttrDataMemberLoc).(int64); ok {
						out[n] = off
					}
				}
			}
			if c.Children {
				r.SkipChildren()
			}
		}
		if len(out) > 0 {
			return out
		}
	}
}

// sectionBytes is the contents of the section name of the ELF file path.
func sectionBytes(t *testing.T, path, name string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAsyncioOffsetsMatchDWARF checks what the walker reads of asyncio
// tasks (pyattach_walk_tasks) against the DWARF of Debian's 3.14 and
// 3.15 in the roots (and their debug builds): the layout built from the
// .AsyncioDebug section of the module that has it (the _asyncio
// extension module, or the executable where it is built in) equals the
// TaskObj members' offsets, so do the offsets the section does not carry
// (fut_state, task_fut_waiter), and the generator frame states the
// walker takes as suspended and executing are enum _framestate's.
func TestAsyncioOffsetsMatchDWARF(t *testing.T) {
	var sources []pyoffsets.Source
	for _, s := range pyoffsets.DiscoverRoots(pyoffsets.RootsDir()) {
		var maj, min int
		fmt.Sscanf(s.Version, "%d.%d", &maj, &min)
		if maj == 3 && min >= 14 {
			sources = append(sources, s)
		}
	}
	if len(sources) == 0 {
		testenv.Missing(t, "no root with Python 3.14+ and its DWARF in %s (make them with: sudo scripts/make-roots.sh)", pyoffsets.RootsDir())
	}
	dir := walkerDir(t)
	for _, s := range sources {
		s := s
		t.Run(s.Version+s.ABIFlags+"-"+filepath.Base(s.Path), func(t *testing.T) {
			testenv.Parallel(t)
			minor := strings.Join(strings.SplitN(s.Version, ".", 3)[:2], ".")
			exeDWARF := testenv.DWARF(t, s.Debug)
			states, err := pyoffsets.Enumerators(exeDWARF, "_framestate")
			if err != nil {
				t.Fatal(err)
			}
			var fs [2]any
			walkerPython(t, dir, `import json, pyattach_walk as w
print(json.dumps(w.frame_states(tuple(int(x) for x in sys.argv[2].split(".")))))`, "", &fs, minor)
			suspended := fmt.Sprint(fs[0])
			for name, v := range states {
				isSusp := strings.HasPrefix(name, "FRAME_SUSPENDED")
				if in := strings.Contains(" "+strings.Trim(suspended, "[]")+" ", fmt.Sprintf(" %d ", v)); in != isSusp {
					t.Errorf("%s = %d; the walker's suspended states are %s", name, v, suspended)
				}
				if name == "FRAME_EXECUTING" && fmt.Sprint(fs[1]) != fmt.Sprint(v) {
					t.Errorf("FRAME_EXECUTING = %d; the walker's is %v", v, fs[1])
				}
			}

			// The module with the section: the executable, else the
			// _asyncio extension module beside it, with its own debug file.
			module, dw := s.Path, exeDWARF
			sec := sectionBytes(t, module, ".AsyncioDebug")
			if sec == nil {
				root := strings.TrimSuffix(s.Path, filepath.Join("usr", "bin", filepath.Base(s.Path)))
				pattern := filepath.Join(root, "usr", "lib", "python"+minor, "lib-dynload", "_asyncio.cpython-"+strings.ReplaceAll(minor, ".", "")+s.ABIFlags+"-*.so")
				mods, _ := filepath.Glob(pattern)
				if len(mods) != 1 {
					t.Fatalf("no .AsyncioDebug in %s, and %d modules %s", s.Path, len(mods), pattern)
				}
				module = mods[0]
				sec = sectionBytes(t, module, ".AsyncioDebug")
				// Its DWARF: in the file (a debug build's), else its
				// build-id debug file.
				if sectionBytes(t, module, ".debug_info") != nil {
					dw = testenv.DWARF(t, module)
				} else {
					id := testenv.ReadelfBuildID(t, module)
					dw = testenv.DWARF(t, filepath.Join(root, "usr", "lib", "debug", ".build-id", id[:2], id[2:]+".debug"))
				}
			}
			if sec == nil {
				t.Fatalf("%s has no .AsyncioDebug section", module)
			}
			var fields map[string]int64
			walkerPython(t, dir, `import json, binascii, pyattach_walk as w
raw = binascii.unhexlify(sys.stdin.read().strip())
print(json.dumps(w.asyncio_debug_fields(lambda a, n: raw[a - 4096:a - 4096 + n], 4096)))`, hex.EncodeToString(sec), &fields)
			if fields == nil {
				t.Fatalf("the walker does not read %s's .AsyncioDebug", module)
			}
			task := structMembers(t, dw, "TaskObj")
			if task == nil {
				t.Fatalf("no struct TaskObj in the DWARF of %s", module)
			}
			for name, member := range map[string]string{
				"TaskObj.task_name": "task_name", "TaskObj.task_coro": "task_coro", "TaskObj.task_node": "task_node",
				"TaskObj.task_fut_waiter": "task_fut_waiter", "FutureObj.fut_state": "task_state",
				"FutureObj.fut_awaited_by": "task_awaited_by", "FutureObj.fut_is_task": "task_is_task",
				"FutureObj.fut_awaited_by_is_set": "task_awaited_by_is_set",
			} {
				got, ok := fields[name]
				want, ok2 := task[member]
				if !ok || !ok2 || got != want {
					t.Errorf("%s: the walker has %d (%v), TaskObj.%s is at %d (%v)", name, got, ok, member, want, ok2)
				}
			}
		})
	}
}
