// Package callerr formats the errors of failed C-library calls alike for
// every API package (acl, hccl): "Op: NAME (code): message". It holds no
// state; its functions are safe for concurrent use.
package callerr

import "strconv"

// Message formats a failed call: the C function op, the code's name and,
// when the name is a known one (an unknown code's name already carries
// the number), the code in parentheses, then msg if any.
func Message(op, name string, code int64, known bool, msg string) string {
	s := op + ": " + name
	if known {
		s += " (" + strconv.FormatInt(code, 10) + ")"
	}
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// Uncoded formats a failed call without its code, "Op: message", for an
// error quoted inside another error reported under the same code, so the
// code is not said twice.
func Uncoded(op, msg string) string {
	switch {
	case op == "":
		return msg
	case msg == "":
		return op
	}
	return op + ": " + msg
}
