package contenvd

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
)

// BenchmarkRead measures what every service start pays: 60 variables, about
// the size of a hermes container's environment.
func BenchmarkRead(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "env")
	env := make([]string, 60)
	for i := range env {
		env[i] = fmt.Sprintf("VAR_%d=value-%d-0123456789abcdef", i, i)
	}
	if _, err := Write(dir, env, -1, slog.New(slog.DiscardHandler)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Environ(dir); err != nil {
			b.Fatal(err)
		}
	}
}
