package pyext

import (
	"errors"
	"fmt"

	"github.com/pyattach/pyattach/detect/saferead"
)

// untrusted returns "" when the debugger may run the host file p for
// the user uid, else why not, as a "tried" reason: the file, a
// directory on its way or a link to it is owned by another user or
// writable by others (saferead.CheckTrusted).
func untrusted(p string, uid int, debugger string) string {
	err := saferead.CheckTrusted(p, uid)
	if err == nil {
		return ""
	}
	var ue *saferead.UntrustedError
	if errors.As(err, &ue) {
		if ue.Component == ue.Path {
			return fmt.Sprintf("refused: it is %s, and %s would run it", ue.Reason, debugger)
		}
		return fmt.Sprintf("refused: %s is %s, and %s would run it", ue.Component, ue.Reason, debugger)
	}
	return "refused: " + errText(err)
}
