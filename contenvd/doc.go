// Package contenvd keeps the container environment directory (SPEC §2 step 3):
// the boot environment written once as one file per variable, so that boot
// hooks can add or change variables and every service start sees the result.
//
// Layout (the interface, like s6-overlay's /run/s6/container_environment):
//
//	<dir>/            0750 root:<user's group>
//	<dir>/<NAME>      0640 root:<user's group>, content = value, byte for byte
//
// The directory holds API keys, hence the modes. A file reads as
// s6-overlay's with-contenv reads it (s6-envdir -Lf): its content without
// one trailing newline, a NUL read as a newline; Write adds a newline to a
// value that ends with one, so every value it wrote reads back exact. Empty
// values are kept (s6 unsets the variable of an empty file; hinit does not).
//
// Variable names: any name that is one safe path component is kept, so names
// that Kubernetes or docker allow (a.b, a-b) survive. Skipped, with one
// warning each: an empty name, ".", "..", a name holding '/' or NUL, a name
// starting with '.' (dot-files are where writers stage temporary files and
// Read ignores them), and a name longer than 255 bytes (NAME_MAX).
package contenvd
