//go:build cgo && !osusergo

package account

// cgoLookups: os/user asks libc here, not /etc/passwd itself.
const cgoLookups = true
