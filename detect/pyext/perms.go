package pyext

import (
	"errors"
	"fmt"

	"github.com/pyattach/pyattach/detect/safefs"
)

// untrusted returns "" when the debugger may run the host file p for
// the user uid, else why not, as a "tried" reason: the file, a
// directory on its way or a link to it is owned by another user or
// writable by others (safefs.CheckTrusted).
func untrusted(p string, uid int, debugger string) string {
	err := safefs.CheckTrusted(p, uid)
	if err == nil {
		return ""
	}
	var ue *safefs.UntrustedError
	if errors.As(err, &ue) {
		if ue.Component == ue.Path {
			return fmt.Sprintf("refused: it is %s, and %s would run it", ue.Reason, debugger)
		}
		return fmt.Sprintf("refused: %s is %s, and %s would run it", ue.Component, ue.Reason, debugger)
	}
	return "refused: " + errText(err)
}
