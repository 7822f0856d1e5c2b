package planner

import (
	"github.com/pyattach/pyattach/cmd/internal/target"
	"github.com/pyattach/pyattach/cmd/internal/walkerdir"
	"github.com/pyattach/pyattach/detect/plan"
	"github.com/pyattach/pyattach/detect/pyoffsets"
)

// WalkerFor is the plan's stack walker for the resolved interpreter:
// nil when its offsets do not cover the interpreter's version; else the
// walker, written under dataHome (walkerdir.Write), and what the
// generators need to load it.
func WalkerFor(res *target.Result, dataHome string) (*plan.Walker, error) {
	if res == nil || !pyoffsets.Supported(res.Python.Version, res.Python.ABIFlags) {
		return nil, nil
	}
	dir, err := walkerdir.Write(dataHome)
	if err != nil {
		return nil, err
	}
	w := &plan.Walker{Dir: dir, Version: res.Python.Version, ABIFlags: res.Python.ABIFlags}
	if res.Container {
		w.Root = res.Root
	}
	return w, nil
}
