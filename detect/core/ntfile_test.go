package core

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/pyattach/pyattach/detect/elfinfo"
)

// le64 and le32 write little-endian words.
func le64(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

func le32(v ...uint32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func TestParseNTFile(t *testing.T) {
	tests := []struct {
		name  string
		desc  []byte
		bo    binary.ByteOrder
		class elf.Class
		want  []File
	}{
		{
			name: "64-bit LE, as the kernel writes it",
			desc: cat(le64(2, 4096,
				0x400000, 0x41f000, 0,
				0x41f000, 0x6cf000, 0x1f),
				[]byte("/usr/bin/python3.11\x00/usr/bin/python3.11\x00")),
			bo: binary.LittleEndian, class: elf.ELFCLASS64,
			want: []File{
				{Start: 0x400000, End: 0x41f000, Offset: 0, Path: "/usr/bin/python3.11"},
				{Start: 0x41f000, End: 0x6cf000, Offset: 0x1f000, Path: "/usr/bin/python3.11"},
			},
		},
		{
			name: "64-bit, gdb's page size of 1",
			desc: cat(le64(1, 1, 0x7f0000001000, 0x7f0000002000, 0x26000), []byte("/lib/libc.so.6\x00")),
			bo:   binary.LittleEndian, class: elf.ELFCLASS64,
			want: []File{{Start: 0x7f0000001000, End: 0x7f0000002000, Offset: 0x26000, Path: "/lib/libc.so.6"}},
		},
		{
			name: "32-bit LE with a deleted file and trailing padding",
			desc: cat(le32(2, 4096,
				0x08048000, 0x08049000, 0,
				0xf7d00000, 0xf7d20000, 2),
				[]byte("/app/a.out\x00/tmp/libx.so (deleted)\x00\x00\x00")),
			bo: binary.LittleEndian, class: elf.ELFCLASS32,
			want: []File{
				{Start: 0x08048000, End: 0x08049000, Path: "/app/a.out"},
				{Start: 0xf7d00000, End: 0xf7d20000, Offset: 0x2000, Path: "/tmp/libx.so", Deleted: true},
			},
		},
		{
			name: "32-bit BE",
			desc: func() []byte {
				b := binary.BigEndian.AppendUint32(nil, 1)
				for _, v := range []uint32{0x1000, 0x10000, 0x20000, 3} {
					b = binary.BigEndian.AppendUint32(b, v)
				}
				return append(b, "/bin/sh\x00"...)
			}(),
			bo: binary.BigEndian, class: elf.ELFCLASS32,
			want: []File{{Start: 0x10000, End: 0x20000, Offset: 0x3000, Path: "/bin/sh"}},
		},
		{
			name: "no mappings",
			desc: le64(0, 4096),
			bo:   binary.LittleEndian, class: elf.ELFCLASS64,
			want: []File{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseNTFile(tc.desc, tc.bo, tc.class)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseNTFile =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

func TestParseNTFileMalformed(t *testing.T) {
	tests := []struct {
		name  string
		desc  []byte
		class elf.Class
	}{
		{"empty", nil, elf.ELFCLASS64},
		{"half a header", le64(1), elf.ELFCLASS64},
		{"count of 2^60", cat(le64(1<<60, 4096, 1, 2, 0), []byte("/x\x00")), elf.ELFCLASS64},
		{"count of 2^64-1", cat(le64(^uint64(0), 4096, 1, 2, 0), []byte("/x\x00")), elf.ELFCLASS64},
		{"32-bit count of 2^32-1", cat(le32(^uint32(0), 4096, 1, 2, 0), []byte("/x\x00")), elf.ELFCLASS32},
		{"count one more than the triples", cat(le64(2, 4096, 1, 2, 0), []byte("/x\x00")), elf.ELFCLASS64},
		{"names missing", le64(1, 4096, 0x1000, 0x2000, 0), elf.ELFCLASS64},
		{"fewer names than mappings", cat(le64(2, 4096, 1, 2, 0, 3, 4, 0), []byte("/x\x00/y")), elf.ELFCLASS64},
		{"end before start", cat(le64(1, 4096, 0x2000, 0x1000, 0), []byte("/x\x00")), elf.ELFCLASS64},
		{"offset overflows", cat(le64(1, 4096, 1, 2, 1<<60), []byte("/x\x00")), elf.ELFCLASS64},
		{"page size 0", cat(le64(1, 0, 1, 2, 0), []byte("/x\x00")), elf.ELFCLASS64},
		{"unknown class", le64(0, 4096), elf.ELFCLASSNONE},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			files, err := ParseNTFile(tc.desc, binary.LittleEndian, tc.class)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, elfinfo.ErrCorrupt) {
				t.Errorf("ParseNTFile = %+v, %v; want ErrCorrupt", files, err)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
				t.Errorf("allocated %d bytes for a %d-byte payload", d, len(tc.desc))
			}
		})
	}
}
