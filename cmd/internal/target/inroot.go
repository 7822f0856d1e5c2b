package target

import (
	"context"
	"fmt"

	"github.com/pyattach/pyattach/venv"
)

// ResolveInRoot resolves exe, an executable path as a core's process saw
// it, whose files are read under root, the host directory standing for
// that process's "/": a container's root while packing a bundle, or an
// unpacked bundle's root/. The result is a container's (Container, Root,
// ReadFrom), so that the debugger reads every file under root; an empty
// root resolves exe on this machine (Resolve).
func ResolveInRoot(ctx context.Context, exe, root string, opts Options) (*Result, error) {
	if root == "" {
		return Resolve(ctx, exe, opts)
	}
	res := &Result{
		Target: exe, TargetKind: KindExecutable, Exe: exe, Interpreter: exe, Via: "self",
		Container: true, Root: root, Venv: Venv{Kind: string(venv.KindNone)},
	}
	host, err := inRoot(root, exe)
	if err != nil {
		return nil, fmt.Errorf("%s under %s: %w", exe, root, err)
	}
	res.ReadFrom = host
	if err := fillPython(res, exe, root, nil); err != nil {
		return res, err
	}
	res.ExeBuildID = res.BuildID
	return res, nil
}
