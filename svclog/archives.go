package svclog

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"hinit/asuser"
)

// IsArchive reports whether name is an archive of a log dir: @TIME.s, named
// so that archives sort by name in the order they were made (rotate.go).
// s6-log's archives (@ and a TAI64N label, a gateway's log dir the s6
// image wrote) are archives too, ordered by their time (archiveKey), and
// so are its unfinished ones, @LABEL.u: the current file of an s6-log that
// was killed, which it archived as such at its next start and counts
// among its archives (n). hinit writes only .s.
func IsArchive(name string) bool {
	return strings.HasPrefix(name, "@") && (strings.HasSuffix(name, ".s") || strings.HasSuffix(name, ".u"))
}

// Archives lists the archives in the log dir, oldest first: what a reader
// prints before current to show more than current holds.
func Archives(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if IsArchive(e.Name()) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	slices.SortFunc(names, compareArchives)
	return names, nil
}

// compareArchives orders two archive names oldest first: by archiveKey,
// then by name.
func compareArchives(a, b string) int {
	if c := strings.Compare(archiveKey(a), archiveKey(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// archiveKey is the name an archive would have in hinit's layout: its own
// name, or for s6-log's @<16 hex digits: TAI64 label><8: nanoseconds>.s,
// the same time in hinit's layout. The label is 2^62 + 10 + the Unix
// seconds (the leap seconds s6 may add since 1972 move it by under a
// minute). Without it an s6-log archive ("@4000...") sorts after every
// archive of hinit's ("@2026..."): after a move from the s6 image, prune
// kept s6-log's old archives and deleted each new one.
func archiveKey(name string) string {
	hex := strings.TrimPrefix(name, "@")
	hex, s := strings.CutSuffix(hex, ".s")
	hex, u := strings.CutSuffix(hex, ".u")
	if !s && !u || len(hex) != 24 {
		return name
	}
	label, err1 := strconv.ParseUint(hex[:16], 16, 64)
	nano, err2 := strconv.ParseUint(hex[16:], 16, 32)
	if err1 != nil || err2 != nil || label < 1<<62+10 || label-(1<<62+10) > 1<<40 || nano >= 1e9 {
		return name
	}
	return time.Unix(int64(label-(1<<62+10)), int64(nano)).UTC().Format(archiveLayout)
}

// ErrNotRegular: a log file a reader was to open is not a regular file.
var ErrNotRegular = asuser.ErrNotRegular

// OpenRead opens a log's current or archive for a reader (hsvc logs, which
// root runs too) as asuser.OpenRegular does: never through a symlink, not
// blocking on a FIFO, a regular file only. The log dir is the service's
// user's, who may plant a FIFO there (root's hsvc logs hung in the open for
// good) or a symlink to a file only root may read; svclog itself writes
// neither, and reaches its dir through no symlink.
func OpenRead(path string) (*os.File, error) { return asuser.OpenRegular(path) }
