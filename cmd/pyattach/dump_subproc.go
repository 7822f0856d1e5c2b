package main

import (
	"errors"
	"fmt"

	"github.com/pyattach/pyattach/cmd/internal/safetext"
	"github.com/pyattach/pyattach/cmd/internal/shquote"
	"github.com/pyattach/pyattach/cmd/internal/target"
)

// checkTree refuses, before anything is read or decompressed, what
// dump --subprocesses cannot read: a core, a bundle or --coredump. A
// core holds one process; the processes below one are read from a live
// process only (dump.RunTree).
func (c *DumpCmd) checkTree() error {
	switch {
	case !c.Subprocesses || c.Coredump == "" && (c.Target == "" || target.IsPID(c.Target)):
		return nil
	case c.Coredump != "":
		return withHint(errors.New("dump --subprocesses reads a running process and the processes below it; a core holds one process"),
			"dump the core alone: pyattach dump --coredump %s", safetext.Escape(shquote.Quote(c.Coredump)))
	}
	return withHint(fmt.Errorf("dump --subprocesses reads a running process and the processes below it; %s is not a PID (a core holds one process)", safetext.Escape(shquote.Quote(c.Target))),
		"dump a core alone: pyattach dump %s; or give a running process's PID: pyattach dump --subprocesses PID", safetext.Escape(shquote.Quote(c.Target)))
}
