package doctor

import (
	"context"
	"errors"
	"fmt"

	"github.com/pyattach/pyattach/cmd/internal/debugsearch"
	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/target"
)

// sourceChecks lists the source trees that are missing.
func (s *Services) sourceChecks(ctx context.Context, res *target.Result, di *debugsearch.Info) []Check {
	if s.Sources == nil {
		return nil
	}
	m, err := s.Sources(ctx, res, di)
	var rootsErr *SourceRootsError
	switch {
	case errors.As(err, &rootsErr):
		return []Check{{ID: "sources", Status: Warn, Summary: safetext.Fold(err.Error())}}
	case err != nil:
		return []Check{{ID: "sources", Status: Skip, Summary: safetext.Fold(err.Error())}}
	}
	if m.Modules == 0 {
		return []Check{{ID: "sources", Status: Note, Summary: "no module's debug information names source files: nothing to look for"}}
	}
	var out []Check
	for _, u := range m.Unresolved {
		ch := Check{ID: "sources", Status: Warn,
			Summary: fmt.Sprintf("%d source files under %s are not on this machine (list and source list show \"No such file or directory\")", u.Files, u.Prefix),
			Fix:     u.Hint}
		if u.Shipped {
			// CPython's own C files, a package's, the system's
			// headers: py-bt and py-list do not read them.
			ch.Status = Note
			ch.Summary = fmt.Sprintf("%d source files under %s are not on this machine: list in those native frames shows \"No such file or directory\"; py-bt and py-list do not need them", u.Files, u.Prefix)
		}
		out = append(out, ch)
	}
	if len(out) == 0 {
		out = append(out, Check{ID: "sources", Status: OK, Summary: fmt.Sprintf("the sources of %d modules are found (%d rules)", m.Modules, m.Rules)})
	}
	return out
}
