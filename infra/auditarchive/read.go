package auditarchive

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/cairnhq/cairn/domain"
	"github.com/cairnhq/cairn/domain/audit"
)

// HeadsFile is the name of an archive's signed heads file.
const HeadsFile = "heads.ndjson"

// fileName is the name of the file of records first to last.
func fileName(first, last uint64) string {
	return fmt.Sprintf("audit-%012d-%012d.ndjson", first, last)
}

var filePattern = regexp.MustCompile(`^audit-[0-9]{12}-[0-9]{12}\.ndjson$`)

// Files lists the record files of the archive in dir, in chain order.
func Files(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("audit archive: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Type().IsRegular() && filePattern.MatchString(e.Name()) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Record is one archived record: the record and its line as stored.
type Record struct {
	audit.Record
	Raw []byte
}

// Records reads the records of the archive in dir, file by file, in
// chain order (names sort so). A line that is not a record ends the
// sequence with an error naming the file and line. It holds one line at a
// time.
func Records(dir string) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		files, err := Files(dir)
		if err == nil && len(files) == 0 {
			err = fmt.Errorf("audit archive %s: no record files (audit-*.ndjson)", dir)
		}
		if err != nil {
			yield(Record{}, err)
			return
		}
		for _, name := range files {
			if !readFile(name, yield) {
				return
			}
		}
	}
}

// readFile yields the records of one file; false when the caller stopped
// or the file failed.
func readFile(name string, yield func(Record, error) bool) bool {
	f, err := os.Open(name)
	if err != nil {
		yield(Record{}, fmt.Errorf("audit archive: %w", err))
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), domain.AuditPayloadBytes)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var r domain.SealedRecord
		if err := json.Unmarshal(line, &r); err != nil {
			yield(Record{}, fmt.Errorf("audit archive %s line %d: not a record: %w", name, n, err))
			return false
		}
		if !yield(Record{Record: r.Record, Raw: append([]byte(nil), line...)}, nil) {
			return false
		}
	}
	if err := sc.Err(); err != nil {
		yield(Record{}, fmt.Errorf("audit archive %s: %w", name, err))
		return false
	}
	return true
}

// ErrNotEmpty: the archive's directory already holds an archive.
var ErrNotEmpty = errors.New("audit archive: the directory already holds archive files")
