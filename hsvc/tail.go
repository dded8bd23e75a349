package hsvc

import (
	"fmt"
	"io"
	"os"
)

// tailBlock is how much of the file tail reads at a time, from the end.
const tailBlock = 32 << 10

// tail copies the last n lines of f to w and leaves f's offset where it
// stopped reading, so that following goes on from there.
func tail(f *os.File, n int, w io.Writer) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	size := st.Size()
	start, err := lastLines(f, size, n)
	if err != nil {
		return err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	if _, err := io.Copy(w, io.LimitReader(f, size-start)); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// lastLines is the offset where the last n lines of the first size bytes
// of r begin. A final newline ends the last line; it does not start one.
func lastLines(r io.ReaderAt, size int64, n int) (int64, error) {
	if n <= 0 {
		return size, nil
	}
	buf := make([]byte, tailBlock)
	seen := 0
	for end := size; end > 0; {
		start := max(end-tailBlock, 0)
		chunk := buf[:end-start]
		if _, err := r.ReadAt(chunk, start); err != nil && err != io.EOF {
			return 0, fmt.Errorf("read: %w", err)
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || start+int64(i) == size-1 {
				continue
			}
			if seen++; seen == n {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}
