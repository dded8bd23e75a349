//go:build !cgo || osusergo

package account

// cgoLookups: os/user reads /etc/passwd itself, as in hinit's static build.
const cgoLookups = false
