package contenvd

import (
	"errors"
	"strings"
)

// nameMax is the longest file name Linux accepts (NAME_MAX).
const nameMax = 255

// Reasons a variable name cannot be a file name in the directory.
var (
	errEmptyName = errors.New("empty name")
	errDotName   = errors.New("name starts with '.'")
	errBadChar   = errors.New("name holds '/' or NUL")
	errLongName  = errors.New("name longer than 255 bytes")
)

// checkName reports why name cannot be stored as a file, or nil when it can.
func checkName(name string) error {
	switch {
	case name == "":
		return errEmptyName
	case name[0] == '.':
		return errDotName // also covers "." and ".."
	case strings.ContainsAny(name, "/\x00"):
		return errBadChar
	case len(name) > nameMax:
		return errLongName
	}
	return nil
}
