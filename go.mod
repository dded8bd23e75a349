module hinit

go 1.26.0

require (
	github.com/creack/pty v1.1.24
	github.com/hanwen/go-fuse/v2 v2.12.1
	golang.org/x/sys v0.49.0
	gopkg.in/yaml.v3 v3.0.1
)
