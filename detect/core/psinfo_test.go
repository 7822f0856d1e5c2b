package core

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"reflect"
	"testing"
)

// psinfoTail is pr_pid 77, pr_ppid 1, pr_pgrp 77, pr_sid 77 (32-bit
// little-endian), pr_fname "python3" and pr_psargs "python3 app.py ".
func psinfoTail(bo binary.ByteOrder) []byte {
	var b bytes.Buffer
	for _, v := range []uint32{77, 1, 77, 77} {
		binary.Write(&b, bo, v)
	}
	b.Write(append([]byte("python3"), make([]byte, 16-7)...))
	b.Write(append([]byte("python3 app.py "), make([]byte, 80-15)...))
	return b.Bytes()
}

// TestParsePSInfoOwner: pr_uid and pr_gid in the layouts Linux writes:
// x86_64 and arm64 (pad, 8-byte pr_flag, 32-bit ids), i386 and arm
// (4-byte pr_flag, 16-bit ids), 32-bit powerpc and mips (32-bit ids);
// a note of another size gives no owner, a short one nothing.
func TestParsePSInfoOwner(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	for _, tc := range []struct {
		name  string
		class elf.Class
		bo    binary.ByteOrder
		head  []byte
		want  *Owner
	}{
		{"x86_64", elf.ELFCLASS64, le, []byte{
			'S', 'S', 0, 0, 0, 0, 0, 0, // state, sname, zomb, nice, pad
			0x00, 0x06, 0x40, 0, 0, 0, 0, 0, // pr_flag
			0xe8, 0x03, 0, 0, // pr_uid 1000
			0x64, 0, 0, 0, // pr_gid 100
		}, &Owner{UID: 1000, GID: 100}},
		{"s390x", elf.ELFCLASS64, be, []byte{
			'R', 'R', 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0, 0, 0x40, 0x06, 0x00,
			0, 0, 0xff, 0xfe, // pr_uid 65534
			0, 0, 0xff, 0xfe,
		}, &Owner{UID: 65534, GID: 65534}},
		{"i386", elf.ELFCLASS32, le, []byte{
			'S', 'S', 0, 0,
			0x00, 0x06, 0x40, 0, // pr_flag
			0xe9, 0x03, // pr_uid 1001
			0x0a, 0x00, // pr_gid 10
		}, &Owner{UID: 1001, GID: 10}},
		{"ppc32", elf.ELFCLASS32, be, []byte{
			'S', 'S', 0, 0,
			0, 0x40, 0x06, 0x00,
			0, 0x01, 0x86, 0xa0, // pr_uid 100000
			0, 0x01, 0x86, 0xa1, // pr_gid 100001
		}, &Owner{UID: 100000, GID: 100001}},
		{"root", elf.ELFCLASS64, le, make([]byte, 24), &Owner{}},
		{"odd size", elf.ELFCLASS64, le, make([]byte, 20), nil},
		{"no head", elf.ELFCLASS64, le, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := append(append([]byte(nil), tc.head...), psinfoTail(tc.bo)...)
			var info Info
			parsePSInfo(d, header{class: tc.class, bo: tc.bo}, &info)
			if !reflect.DeepEqual(info.Owner, tc.want) {
				t.Errorf("Owner = %+v, want %+v", info.Owner, tc.want)
			}
			if info.PID != 77 || info.Comm != "python3" || info.Args != "python3 app.py" {
				t.Errorf("PID %d, Comm %q, Args %q", info.PID, info.Comm, info.Args)
			}
		})
	}
	var info Info
	parsePSInfo(psinfoTail(le)[1:], header{class: elf.ELFCLASS64, bo: le}, &info)
	if info.PID != 0 || info.Owner != nil {
		t.Errorf("a short note gave %+v", info)
	}
}

// FuzzParsePSInfo: any NT_PRPSINFO payload, in either class and byte
// order, parses without panicking and gives an owner only when the
// layout holds one.
func FuzzParsePSInfo(f *testing.F) {
	f.Add(append(make([]byte, 24), psinfoTail(binary.LittleEndian)...), false, false)
	f.Add(append(make([]byte, 12), psinfoTail(binary.BigEndian)...), true, true)
	f.Fuzz(func(t *testing.T, d []byte, is32, big bool) {
		h := header{class: elf.ELFCLASS64, bo: binary.LittleEndian}
		if is32 {
			h.class = elf.ELFCLASS32
		}
		if big {
			h.bo = binary.BigEndian
		}
		var info Info
		parsePSInfo(d, h, &info)
		sizes := map[int]bool{136: true}
		if is32 {
			sizes = map[int]bool{124: true, 128: true}
		}
		if info.Owner != nil && !sizes[len(d)] {
			t.Fatalf("owner %+v from a %d-byte note", info.Owner, len(d))
		}
		if len(info.Comm) > 16 || len(info.Args) > 80 {
			t.Fatalf("comm %q or args %q too long", info.Comm, info.Args)
		}
	})
}
