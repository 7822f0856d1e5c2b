package core

import "debug/elf"

// Loaded is one object on the dynamic loader's list (r_debug.r_map) in
// the core's memory.
type Loaded struct {
	// Name is l_name: the path the loader opened the object by
	// (/lib/x86_64-linux-gnu/libc.so.6, the program's PT_INTERP), which
	// a debugger reading the list looks up; "" for the program itself.
	Name string `json:"name"`
	// Path is the NT_FILE path mapping the object's dynamic section
	// (l_ld): the file the core maps, which can differ from Name by a
	// symlinked directory or a chroot's prefix; "" when none maps it.
	Path string `json:"path"`
}

const (
	atPhent = 4
	atPhnum = 5
	dtDebug = 21
	// maxLoaded bounds the link_map entries walked; maxLoadedName one
	// l_name (PATH_MAX); maxDynamic the program's dynamic entries read.
	maxLoaded     = 4096
	maxLoadedName = 4096
	maxDynamic    = 1024
)

// loadedObjects walks the loader's list from the program's DT_DEBUG: the
// program headers at AT_PHDR give its load bias (PT_PHDR) and dynamic
// section (PT_DYNAMIC), whose DT_DEBUG entry points at r_debug, whose
// r_map starts the link_map chain. Anything the core's memory does not
// hold, a cycle or an absurd count ends the walk with what was read.
func loadedObjects(h header, img *image, aux auxv) []Loaded {
	ws := h.wordSize()
	word := func(b []byte) uint64 {
		if ws == 8 {
			return h.bo.Uint64(b)
		}
		return uint64(h.bo.Uint32(b))
	}
	pe := aux.phent
	if pe == 0 {
		pe = h.minPhentsize()
	}
	if aux.phdr == 0 || aux.phnum == 0 || aux.phnum > 4096 || pe < h.minPhentsize() || pe > 1024 {
		return nil
	}
	b, ok := img.read(aux.phdr, int(aux.phnum*pe))
	if !ok {
		return nil
	}
	var phdr, dyn *prog
	for i := uint64(0); i < aux.phnum; i++ {
		p := h.parseProg(b[i*pe:])
		switch p.typ {
		case elf.PT_PHDR:
			phdr = &p
		case elf.PT_DYNAMIC:
			dyn = &p
		}
	}
	if phdr == nil || dyn == nil {
		return nil
	}
	bias := aux.phdr - phdr.vaddr
	n := min(dyn.memsz/(2*ws), maxDynamic)
	d, _ := img.read(dyn.vaddr+bias, int(n*2*ws))
	var rdebug uint64
	for i := uint64(0); i+2*ws <= uint64(len(d)); i += 2 * ws {
		tag := word(d[i:])
		if tag == uint64(elf.DT_NULL) {
			break
		}
		if tag == dtDebug {
			rdebug = word(d[i+ws:])
		}
	}
	if rdebug == 0 {
		return nil
	}
	r, ok := img.read(rdebug+ws, int(ws)) // r_map, after the int r_version
	if !ok {
		return nil
	}
	var out []Loaded
	seen := map[uint64]bool{}
	for lm := word(r); lm != 0 && !seen[lm] && len(out) < maxLoaded; {
		seen[lm] = true
		e, ok := img.read(lm, int(4*ws)) // l_addr, l_name, l_ld, l_next
		if !ok {
			break
		}
		var l Loaded
		if p := word(e[ws:]); p != 0 {
			l.Name, _ = img.cstring(p, maxLoadedName)
		}
		ld := word(e[2*ws:])
		for _, f := range aux.files {
			if f.Start <= ld && ld < f.End {
				l.Path = f.Path
				break
			}
		}
		out = append(out, l)
		lm = word(e[3*ws:])
	}
	return out
}
