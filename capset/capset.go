// Package capset reads the calling thread's effective capabilities
// (capget(2)): hinit's boot checks what a root hinit lacks, asuser checks
// what a switched thread kept, and hsvc names what root lacks.
package capset

import "golang.org/x/sys/unix"

// Effective returns the calling thread's effective capability set: bit N
// is capability N (unix.CAP_*).
func Effective() (uint64, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3} // Pid 0: this thread
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return 0, err
	}
	return uint64(data[0].Effective) | uint64(data[1].Effective)<<32, nil
}
