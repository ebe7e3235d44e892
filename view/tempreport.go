package view

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// reportAge is how long a report written by WriteTempHTML is kept when
// no view touches it.
const reportAge = 24 * time.Hour

// WriteTempHTML writes the HTML report of session id of db (as
// ExportHTML does) to a file in mcpvcr's folder of the system's temporary
// directory and returns its name. cassette is the path db was opened
// from: each session of each cassette has one file there, rewritten by
// every view of it, and reports no view has written for a day are
// removed, so views do not pile files up. The folder is the user's own
// (0700); where it cannot be, the report gets a new file of its own.
// When no file can be created the name is ""; when the report cannot be
// written, the error names the file.
func WriteTempHTML(ctx context.Context, db *store.DB, id int64, cassette string) (string, error) {
	dir, shared := reportDir()
	var f *os.File
	var err error
	if shared {
		f, err = os.CreateTemp(dir, ".report-*.html")
	} else {
		f, err = os.CreateTemp("", fmt.Sprintf("mcpvcr-session-%d-*.html", id))
	}
	if err != nil {
		return "", fmt.Errorf("create the report file: %w", err)
	}
	name := f.Name()
	if shared {
		name = filepath.Join(dir, reportName(id, cassette))
	}
	bw := bufio.NewWriter(f)
	err = ExportHTML(ctx, db, bw, id)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && shared {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		if shared {
			os.Remove(f.Name())
		}
		return name, fmt.Errorf("write %s: %w", name, err)
	}
	return name, nil
}

// reportName is the file of session id of cassette: the session number
// to read, and a hash of the cassette's absolute path to keep cassettes
// apart.
func reportName(id int64, cassette string) string {
	if abs, err := filepath.Abs(cassette); err == nil {
		cassette = abs
	}
	sum := sha256.Sum256([]byte(cassette))
	base := strings.TrimSuffix(filepath.Base(cassette), filepath.Ext(cassette))
	return fmt.Sprintf("%s-session-%d-%s.html", safeName(base), id, hex.EncodeToString(sum[:4]))
}

// safeName keeps letters, digits, '-' and '_' of s, at most 40 of them.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= 40 {
			break
		}
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "cassette"
	}
	return b.String()
}

// reportDir returns mcpvcr's folder for reports, made if need be and
// pruned of old reports, and whether it can be used: a directory, not a
// link, owned by this user and by no one else writable. The system's
// temporary directory is shared, so a folder someone else made there is
// never written into.
func reportDir() (string, bool) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("mcpvcr-view-%d", os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !os.IsExist(err) {
		return "", false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return "", false
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return "", false
	}
	prune(dir, time.Now().Add(-reportAge))
	return dir, true
}

// prune removes the reports in dir last written before cutoff, and the
// half-written ones a killed view left.
func prune(dir string, cutoff time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
