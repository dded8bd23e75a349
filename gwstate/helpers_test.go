package gwstate

import (
	"os"
	"path/filepath"
	"testing"

	"hinit/asuser"
)

// hermes is the identity the tests borrow, as hinit does in production.
var hermes = asuser.ID{UID: 10000, GID: 10000}

// hermesDir returns an empty dir owned by hermes that hermes can reach.
func hermesDir(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	// t.TempDir makes <tmp>/<TestName><n>/<seq>, both 0700 and root's.
	os.Chmod(root, 0o755)
	os.Chmod(filepath.Dir(root), 0o755)
	dir := filepath.Join(root, "home")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, hermes.UID, hermes.GID); err != nil {
		t.Fatal(err)
	}
	return dir
}

// asHermes runs fn with hermes' filesystem rights.
func asHermes(t testing.TB, fn func() error) error {
	t.Helper()
	return asuser.Do(hermes, fn)
}

func writeFile(t testing.TB, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readString(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
