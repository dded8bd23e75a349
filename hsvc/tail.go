package hsvc

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"hinit/svclog"
)

// tailBlock is how much of the file tail reads at a time, from the end.
const tailBlock = 32 << 10

// tail copies the last n lines of the log whose current is f (at path) to
// w: current's, and when it holds fewer, those before them in the newest
// archives, so that a rotation just made hides none of them. It leaves f's
// offset where it stopped reading, so that following goes on from there.
func tail(path string, f *os.File, n int, w io.Writer) error {
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	size := st.Size()
	start, lines, err := lastLines(f, size, n)
	if err != nil {
		return err
	}
	if lines < n {
		if err := tailArchives(path, f, n-lines, w); err != nil {
			return err
		}
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seek: %w", err)
	}
	if _, err := io.Copy(w, io.LimitReader(f, size-start)); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// tailArchives copies the last n lines of the archives of dir to w, oldest
// first, those older than cur (the current being read, which a rotation
// may have made an archive meanwhile) only. An archive that cannot be read
// (pruned meanwhile) is passed over; one that ends mid-line (a write that
// failed) gets its line ended.
func tailArchives(path string, cur *os.File, n int, w io.Writer) error {
	dir := filepath.Dir(path)
	names := archivesBefore(path, cur)
	type part struct {
		f     *os.File
		start int64
		size  int64
	}
	var parts []part
	defer func() {
		for _, p := range parts {
			p.f.Close()
		}
	}()
	for i := len(names) - 1; i >= 0 && n > 0; i-- {
		a, err := svclog.OpenRead(filepath.Join(dir, names[i]))
		if err != nil {
			continue
		}
		st, err := a.Stat()
		if err != nil {
			a.Close()
			continue
		}
		start, lines, err := lastLines(a, st.Size(), n)
		if err != nil {
			a.Close()
			continue
		}
		parts = append(parts, part{a, start, st.Size()})
		n -= lines
	}
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if _, err := io.Copy(w, io.NewSectionReader(p.f, p.start, p.size-p.start)); err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		if err := endLine(w, p.f); err != nil {
			return fmt.Errorf("copy: %w", err)
		}
	}
	return nil
}

// longestLine is the longest line a log hinit writes holds: svclog's
// longest piece, its time stamp and newline, with room to spare.
const longestLine = svclog.MaxLine + 64

// lastLines is the offset where the last n lines of the first size bytes
// of r begin, and how many lines there are from there (fewer than n when
// r holds fewer). A final newline ends the last line; it does not start
// one. It reads no further back than n longest lines: a file with fewer
// newlines there is no log hinit wrote (a huge or sparse file put in the
// log dir), and its last n × longestLine bytes count as the n lines.
func lastLines(r io.ReaderAt, size int64, n int) (int64, int, error) {
	if n <= 0 {
		return size, 0, nil
	}
	floor := int64(0)
	if int64(n) < size/longestLine {
		floor = size - int64(n)*longestLine
	}
	buf := make([]byte, tailBlock)
	seen := 0
	for end := size; end > floor; {
		start := max(end-tailBlock, floor)
		chunk := buf[:end-start]
		if _, err := r.ReadAt(chunk, start); err != nil && err != io.EOF {
			return 0, 0, fmt.Errorf("read: %w", err)
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' || start+int64(i) == size-1 {
				continue
			}
			if seen++; seen == n {
				return start + int64(i) + 1, n, nil
			}
		}
		end = start
	}
	if floor > 0 {
		return floor, n, nil
	}
	if size > 0 {
		seen++ // the first line
	}
	return 0, seen, nil
}
