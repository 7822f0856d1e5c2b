package target

import (
	"strings"

	"github.com/pyattach/pyattach/detect/proc"
)

// PythonProcesses lists the processes under pr that run Python, by the
// same rule that names a process's Python children when it is not Python
// itself: a python* executable, or a libpython mapped. Processes that
// exit while they are read, zombies, and processes whose executable and
// mappings the caller may not read (another user's, unless root) are
// left out: a debugger could not attach to them either.
func PythonProcesses(pr *proc.Proc) ([]Child, error) {
	pids, err := pr.PIDs()
	if err != nil {
		return nil, err
	}
	var out []Child
	for _, pid := range pids {
		p, err := pr.Process(pid)
		if err != nil || p.State == "Z" || !isPythonProcess(pr, p) {
			continue
		}
		out = append(out, Child{PID: pid, Comm: p.Comm, Cmdline: strings.Join(p.Cmdline, " ")})
	}
	return out, nil
}
