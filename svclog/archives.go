package svclog

import (
	"os"
	"strings"
)

// IsArchive reports whether name is an archive of a log dir: @TIME.s, named
// so that archives sort by name in the order they were made (rotate.go).
func IsArchive(name string) bool {
	return strings.HasPrefix(name, "@") && strings.HasSuffix(name, ".s")
}

// Archives lists the archives in the log dir, oldest first: what a reader
// prints before current to show more than current holds.
func Archives(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if IsArchive(e.Name()) && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
