package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// MachOBuildDir is where the Mach-O fixture's DWARF says its sources
// were compiled: a CMake FetchContent checkout inside a macOS wheel
// build, as dd-trace-py's echion is.
const MachOBuildDir = "/project/build/cmake.macosx-11-x86_64-cpython-313/_deps/echion-src"

// MachOName is the fixture's file name, an extension module of CPython
// 3.13 on macOS.
const MachOName = "_stack_v2.cpython-313-darwin.so"

// frameSource is the fixture's echion/frame.cc: an echion-like
// Frame::read. VARIANT changes the code, so a build with it has another
// UUID.
const frameSource = `namespace echion {
struct Frame {
  int line;
  static Frame *read(void *p, int depth);
};
Frame *Frame::read(void *p, int depth) {
  static Frame f;
  f.line = depth + (p != nullptr) + VARIANT;
  return &f;
}
}
extern "C" int stack_v2_sample(int n) { return echion::Frame::read(nullptr, n)->line; }
`

// MachOFixture is a Mach-O extension module built at test time with
// Debian's clang-14, ld64.lld-14, dsymutil-14, llvm-strip-14 and
// llvm-lipo-14, as dd-trace-py builds its macOS wheels.
type MachOFixture struct {
	// Dir holds everything below.
	Dir string
	// Linked is the x86_64 bundle as the linker wrote it: a symbol
	// table, a debug map (N_OSO) naming Object, no DWARF.
	Linked, Object string
	// SO is Linked after llvm-strip -x, in a directory of its own with
	// its bundle beside it: SO.dSYM (DSYM), whose DWARF file is
	// DSYMDWARF (SO.dSYM/Contents/Resources/DWARF/<name>).
	SO, DSYM, DSYMDWARF string
	// Fat is a universal x86_64 + arm64 file, FatDSYM its bundle
	// (universal too), in a directory of their own.
	Fat, FatDSYM string
	// Other is a .dSYM bundle of a different build (another UUID) of a
	// file of the same name.
	Other string
	// Checkout is a checkout of the sources: Checkout/echion/frame.cc,
	// whose first line is "// CHECKOUT COPY".
	Checkout string
}

// MachO builds the Mach-O fixture in a new temporary directory. The
// compiler runs in a temporary source directory mapped onto
// MachOBuildDir with -fdebug-prefix-map, so the DWARF names that path.
func MachO(t testing.TB) *MachOFixture {
	t.Helper()
	clang := Need(t, "clang++-14")
	for _, tool := range []string{"ld64.lld-14", "dsymutil-14", "llvm-strip-14", "llvm-lipo-14"} {
		Need(t, tool)
	}
	dir := t.TempDir()
	fx := &MachOFixture{Dir: dir}
	src := filepath.Join(dir, "src")
	WriteFile(t, filepath.Join(src, "echion", "frame.cc"), []byte(frameSource), 0o644)
	WriteFile(t, filepath.Join(dir, "checkout", "echion", "frame.cc"), []byte("// CHECKOUT COPY\n"+frameSource), 0o644)
	fx.Checkout = filepath.Join(dir, "checkout")
	build := func(arch, variant, out string) string {
		obj := filepath.Join(dir, "obj", arch+variant, "frame.o")
		if err := os.MkdirAll(filepath.Dir(obj), 0o755); err != nil {
			t.Fatal(err)
		}
		Run(t, src, clang, "-target", arch+"-apple-macos11", "-stdlib=libc++", "-g", "-O0",
			"-DVARIANT="+map[string]string{"": "0", "b": "7"}[variant],
			"-fdebug-prefix-map="+src+"="+MachOBuildDir, "-c", "echion/frame.cc", "-o", obj)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		Run(t, dir, "ld64.lld-14", "-arch", arch, "-platform_version", "macos", "11.0", "11.0",
			"-bundle", "-undefined", "dynamic_lookup", obj, "-o", out)
		return obj
	}
	dsym := func(bin, bundle string, args ...string) {
		Run(t, dir, "dsymutil-14", append([]string{bin, "-o", bundle}, args...)...)
		// dsymutil names the DWARF file after its input; the bundle
		// must name it after the module it belongs to.
		dw := filepath.Join(bundle, "Contents", "Resources", "DWARF")
		want := strings.TrimSuffix(filepath.Base(bundle), ".dSYM")
		if got := filepath.Base(bin); got != want {
			if err := os.Rename(filepath.Join(dw, got), filepath.Join(dw, want)); err != nil {
				t.Fatal(err)
			}
		}
	}
	fx.Linked = filepath.Join(dir, "linked", MachOName)
	fx.Object = build("x86_64", "", fx.Linked)
	fx.SO = filepath.Join(dir, "thin", MachOName)
	CopyFile(t, fx.Linked, fx.SO, 0o755)
	Run(t, dir, "llvm-strip-14", "-x", fx.SO)
	fx.DSYM = fx.SO + ".dSYM"
	dsym(fx.Linked, fx.DSYM)
	fx.DSYMDWARF = filepath.Join(fx.DSYM, "Contents", "Resources", "DWARF", MachOName)

	arm := filepath.Join(dir, "arm64", MachOName)
	build("arm64", "", arm)
	fx.Fat = filepath.Join(dir, "fat", MachOName)
	if err := os.MkdirAll(filepath.Dir(fx.Fat), 0o755); err != nil {
		t.Fatal(err)
	}
	Run(t, dir, "llvm-lipo-14", "-create", fx.Linked, arm, "-output", fx.Fat)
	// dsymutil runs lipo, which Debian does not name so, to make a
	// universal bundle: one bundle per architecture, then llvm-lipo.
	fx.FatDSYM = fx.Fat + ".dSYM"
	dsym(fx.Fat, fx.FatDSYM, "--arch", "x86_64")
	dsym(fx.Fat, fx.Fat+".arm64.dSYM", "--arch", "arm64")
	fatDWARF := filepath.Join(fx.FatDSYM, "Contents", "Resources", "DWARF", MachOName)
	armDWARF := filepath.Join(fx.Fat+".arm64.dSYM", "Contents", "Resources", "DWARF", MachOName+".arm64")
	Run(t, dir, "llvm-lipo-14", "-create", fatDWARF, armDWARF, "-output", fatDWARF)
	if err := os.RemoveAll(fx.Fat + ".arm64.dSYM"); err != nil {
		t.Fatal(err)
	}
	Run(t, dir, "llvm-strip-14", "-x", fx.Fat)

	other := filepath.Join(dir, "other", MachOName)
	build("x86_64", "b", other)
	fx.Other = other + ".dSYM"
	dsym(other, fx.Other)
	return fx
}
