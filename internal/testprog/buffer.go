package testprog

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for one writer (a process's output, a
// logger) and a test polling what it has written so far.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
