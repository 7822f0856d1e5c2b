package doctor

import (
	"context"
	"strings"
	"testing"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/detect/dsym"
)

// TestMachOChecks: a Mach-O target is checked arch by arch: a .dSYM in
// the store is ok, an architecture whose only bundle has another UUID
// fails with the rejection in its details and the symbols install fix,
// one with only a debug map warns with dsymutil.
func TestMachOChecks(t *testing.T) {
	s, _ := newServices(t)
	s.IsMachO = func(string) bool { return true }
	s.MachODebugInfo = func(context.Context, string) (*debugsearch.Info, error) {
		return &debugsearch.Info{Modules: []debugsearch.Module{{Path: "/site/_stack_v2.cpython-313-darwin.so", MachO: &debugsearch.MachO{Universal: true, Arches: []dsym.Found{
			{CPU: "x86_64", UUID: "4C4C4471-5555-3144-A1B1-371B07785887", Via: dsym.ViaStore, Bundle: "/store/dsym/4C4C4471-5555-3144-A1B1-371B07785887/_stack_v2.cpython-313-darwin.so.dSYM"},
			{CPU: "arm64", UUID: "4C4C4492-5555-3144-A182-AB12A945A33C", Via: dsym.ViaNone,
				Rejected: []dsym.Rejection{{Path: "/site/_stack_v2.cpython-313-darwin.so.dSYM", Reason: "UUID 11111111-5555-3144-A182-AB12A945A33C (arm64), want 4C4C4492-5555-3144-A182-AB12A945A33C"}}},
			{CPU: "x86_64h", UUID: "4C4C4493-5555-3144-A182-AB12A945A33C", Via: dsym.ViaDebugMap, Objects: []string{"/build/frame.o"}},
		}}}}}, nil
	}
	s.Resolve = nil // never called for a Mach-O file
	checks := Run(context.Background(), s, "/site/_stack_v2.cpython-313-darwin.so")
	cs := byID(checks, "debug.dsym")
	if len(cs) != 3 {
		t.Fatalf("debug.dsym checks: %+v", cs)
	}
	want(t, "rejected", cs[0], Fail, "arm64 (UUID 4C4C4492-5555-3144-A182-AB12A945A33C): the .dSYM found belongs to another build", "pyattach symbols install")
	if len(cs[0].Details) != 1 || !strings.Contains(cs[0].Details[0], "want 4C4C4492") {
		t.Errorf("rejection not in the details: %+v", cs[0])
	}
	want(t, "debug map", cs[1], Warn, "x86_64h", "dsymutil /site/_stack_v2.cpython-313-darwin.so")
	want(t, "store", cs[2], OK, "x86_64 (UUID 4C4C4471-5555-3144-A1B1-371B07785887): /store/dsym/", "")
	if !Failed(checks) {
		t.Error("a missing .dSYM does not fail doctor")
	}
}
