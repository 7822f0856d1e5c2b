package target

import "fmt"

// Foreign says why a target's files are not the user's own, one reason
// a line, or nil when they are. uid is the user pyattach runs as.
//
// The debugger runs code it finds beside a target: CPython's extension,
// libthread_db, scripts named by debug files. For a process in another
// root (a container: chroot, pivot_root, podman, docker) every file under
// that root was written by the image or by what runs in it, whoever owns
// it there: container root is not host root. For another user's
// process, its venv, its working directory and its root are that user's.
// Such files stay data (debug information, sources); none of them may
// become debugger code.
func Foreign(res *Result, uid int) []string {
	if res != nil && res.Bundle != "" {
		return []string{fmt.Sprintf("its files come from the bundle %s, packed on another machine", res.Bundle)}
	}
	if res == nil || res.TargetKind != KindPID {
		return nil
	}
	var why []string
	if res.Container {
		where := res.Root
		if where == "" {
			where = "its own mount namespace"
		}
		why = append(why, fmt.Sprintf("process %d runs in another root (%s): the container wrote every file there, whoever owns it", res.PID, where))
	}
	if res.UID != nil && *res.UID != uid {
		why = append(why, fmt.Sprintf("process %d belongs to uid %d, not to you (uid %d): its venv, working directory and files are that user's", res.PID, *res.UID, uid))
	}
	return why
}
