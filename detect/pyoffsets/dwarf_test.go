package pyoffsets

import (
	"errors"
	"testing"

	"github.com/pyattach/pyattach/detect/testenv"
)

// A C file with the shapes FromDWARF must read: typedefs of tagged
// structs, nested and anonymous members, bit fields, and enums (a
// tagged one and an anonymous one, by their typedef names).
const fixtureC = `
typedef struct _object { long ob_refcnt; void *ob_type; } PyObject;
typedef struct { PyObject ob_base; long ob_size; } PyVarObject;
typedef struct {
	PyObject ob_base;
	long length;
	long hash;
	struct { unsigned int interned:2; unsigned int kind:3; unsigned int compact:1; unsigned int ascii:1; unsigned int statically_allocated:1; } state;
} PyASCIIObject;
struct _is { struct _is *next; long id; struct { int count; void *head; } threads; };
typedef struct _is PyInterpreterState;
typedef struct { PyObject ob_base; union { int a; long b; }; void *co_filename; int co_firstlineno; } PyCodeObject;
typedef enum _framestate { FRAME_CREATED = -3, FRAME_SUSPENDED, FRAME_CLEARED = 4 } PyFrameState;
typedef enum { STATE_PENDING, STATE_CANCELLED } fut_state;
PyASCIIObject s; PyInterpreterState i; PyCodeObject c; PyVarObject v; PyFrameState fs; fut_state st;
int main(void) { return 0; }
`

func fixtureDWARF(t *testing.T, flag string) map[string]int64 {
	t.Helper()
	d := testenv.DWARF(t, testenv.CC(t, t.TempDir(), "f", fixtureC, flag, "-O0"))
	m, err := FromDWARF(d)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestFromDWARF(t *testing.T) {
	want := map[string]int64{
		"PyObject.ob_type":                        8,
		"PyVarObject.ob_size":                     16,
		"PyASCIIObject.length":                    16,
		"PyASCIIObject.state":                     32,
		"PyASCIIObject.state.interned:bit_offset": 256,
		"PyASCIIObject.state.interned:bit_size":   2,
		"PyASCIIObject.state.kind:bit_offset":     258,
		"PyASCIIObject.state.kind:bit_size":       3,
		"PyASCIIObject.state.compact:bit_offset":  261,
		"PyASCIIObject.state.ascii:bit_offset":    262,
		"PyInterpreterState.next":                 0,
		"PyInterpreterState.threads.head":         24,
		"PyCodeObject.co_filename":                24,
		"PyCodeObject.co_firstlineno":             32,
		"sizeof(PyObject)":                        16,
		"sizeof(PyASCIIObject)":                   40,
		"PyFrameState.FRAME_CREATED":              -3,
		"PyFrameState.FRAME_SUSPENDED":            -2,
		"PyFrameState.FRAME_CLEARED":              4,
		"fut_state.STATE_PENDING":                 0,
		"fut_state.STATE_CANCELLED":               1,
	}
	// DWARF 4 gives bit fields as DW_AT_data_bit_offset in gcc 12, DWARF
	// 2 as DW_AT_bit_offset from the storage unit's top: both must agree.
	for _, flag := range []string{"-gdwarf-5", "-gdwarf-4", "-gdwarf-2"} {
		got := fixtureDWARF(t, flag)
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("%s: %s = %d (present %v), want %d", flag, k, g, ok, v)
			}
		}
		for _, absent := range []string{"PyASCIIObject.state.ready:bit_offset", "PyThreadState.next", "PyInterpreterState.tstate_head"} {
			if _, ok := got[absent]; ok {
				t.Errorf("%s: %s should be absent", flag, absent)
			}
		}
	}
}

// A program with DWARF but none of CPython's types has no table. (go
// test links its binaries without DWARF, so a C program stands in.)
func TestFromDWARFNotPython(t *testing.T) {
	d := testenv.DWARF(t, testenv.CC(t, t.TempDir(), "plain", "struct point { int x, y; } p;\nint main(void) { return p.x; }\n", "-g", "-O0"))
	if _, err := FromDWARF(d); !errors.Is(err, ErrNoTypes) {
		t.Fatalf("a C program's DWARF: %v, want ErrNoTypes", err)
	}
}
