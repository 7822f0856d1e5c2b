package core

import (
	"debug/elf"
	"encoding/binary"
	"reflect"
	"testing"
)

// TestEncodeReadBack: what the encoders write, the decoders read back
// (a 64-bit little-endian Linux core, as cmd/internal/gcore writes).
func TestEncodeReadBack(t *testing.T) {
	h := header{class: elf.ELFCLASS64, bo: binary.LittleEndian}

	var info Info
	parsePSInfo(EncodePSInfo64(PSInfo{PID: 4242, PPID: 1, UID: 1000, GID: 1001, State: 'S', Comm: "python3.11",
		Args: []byte("/usr/bin/python3.11\x00app.py\x00")}), h, &info)
	if info.PID != 4242 || info.Comm != "python3.11" || info.Args != "/usr/bin/python3.11 app.py" || info.Owner == nil || *info.Owner != (Owner{1000, 1001}) {
		t.Errorf("NT_PRPSINFO read back as %+v (owner %+v)", info, info.Owner)
	}

	var st Info
	parseStatusPID(EncodePRStatus64(PRStatus{PID: 4243, GRegs: make([]byte, 27*8)}), h, &st)
	if st.PID != 4243 {
		t.Errorf("NT_PRSTATUS read back pid %d, want 4243", st.PID)
	}

	files := []File{{Start: 0x400000, End: 0x401000, Path: "/usr/bin/python3.11"}, {Start: 0x401000, End: 0x403000, Offset: 0x1000, Path: "/usr/lib/libpython3.11.so.1.0"}}
	got, err := ParseNTFile(EncodeNTFile64(files, 0x1000), binary.LittleEndian, elf.ELFCLASS64)
	if err != nil || !reflect.DeepEqual(got, files) {
		t.Errorf("NT_FILE read back as %+v, %v; want %+v", got, err, files)
	}

	// A note's name and descriptor are each padded to 4 bytes.
	if n := AppendNote(nil, "CORE", NTAuxv, []byte{1, 2, 3, 4, 5}); len(n) != 12+8+8 {
		t.Errorf("note of 5 bytes: %d bytes, want 28", len(n))
	}
}
