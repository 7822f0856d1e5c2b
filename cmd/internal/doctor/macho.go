package doctor

import (
	"context"
	"fmt"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/detect/dsym"
)

// machOChecks are the checks of a Mach-O file (a macOS extension module
// or program): for each architecture, whether lldb gets its DWARF (a
// .dSYM proved by UUID, the module itself, or the debug map's object
// files), what was rejected and why, and its sources.
func (s *Services) machOChecks(ctx context.Context, tgt string) []Check {
	di, err := s.MachODebugInfo(ctx, tgt)
	if err != nil {
		ch := Check{ID: "target", Status: Fail, Summary: safetext.Fold(err.Error())}
		if s.Hint != nil {
			ch.Fix = s.Hint(err)
		}
		return []Check{ch}
	}
	var out []Check
	for _, m := range di.Modules {
		if m.MachO == nil {
			continue
		}
		kind := "thin"
		if m.MachO.Universal {
			kind = "universal"
		}
		out = append(out, Check{ID: "target", Status: OK, Summary: fmt.Sprintf("%s: a %s Mach-O file (macOS); pyattach reads its files here, a process needs macOS", m.Path, kind)})
		for _, a := range m.MachO.Arches {
			ch := Check{ID: "debug.dsym"}
			for _, r := range a.Rejected {
				ch.Details = append(ch.Details, fmt.Sprintf("rejected %s: %s", r.Path, r.Reason))
			}
			switch a.Via {
			case dsym.ViaEmbedded:
				ch.Status, ch.Summary = OK, fmt.Sprintf("%s (UUID %s): DWARF in the file itself", a.CPU, a.UUID)
			case dsym.ViaBeside, dsym.ViaDebugDir, dsym.ViaStore:
				ch.Status, ch.Summary = OK, fmt.Sprintf("%s (UUID %s): %s (%s, same UUID)", a.CPU, a.UUID, a.Bundle, a.Via)
			case dsym.ViaDebugMap:
				ch.Status = Warn
				ch.Summary = fmt.Sprintf("%s (UUID %s): no .dSYM; the DWARF is still in the object files the debug map names (%d), which lldb reads only on this machine", a.CPU, a.UUID, len(a.Objects))
				ch.Fix = "make the bundle while the object files exist: dsymutil " + m.Path
			default:
				ch.Status = Fail
				ch.Summary = fmt.Sprintf("%s (UUID %s): no .dSYM with this UUID; lldb shows no lines or locals", a.CPU, a.UUID)
				ch.Fix = "install the wheel's debug symbols: pyattach symbols install --venv VENV <wheel>-debug-symbols.zip (or put <name>.dSYM beside the file, or in a --debug-dir)"
				if len(a.Rejected) > 0 {
					ch.Summary = fmt.Sprintf("%s (UUID %s): the .dSYM found belongs to another build or leaves its bundle; lldb shows no lines or locals", a.CPU, a.UUID)
				}
			}
			out = append(out, ch)
		}
	}
	return append(out, s.sourceChecks(ctx, nil, di)...)
}
