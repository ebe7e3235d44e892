package mcptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// ServerPackage is the import path of the test server program.
const ServerPackage = "github.com/mcpvcr/mcpvcr/internal/mcptest/testserver"

// buildDirPrefix starts the name of each process's build directory, which
// ends with the process id.
const buildDirPrefix = "mcptest-testserver-"

var built struct {
	once sync.Once
	path string
	err  error
}

// BuildServer builds the test server program (package ./testserver) once
// per test process and returns the path of the binary. Concurrent callers,
// parallel tests included, share one build. The binary lives in a
// directory of os.TempDir named after the process id, so that test binaries
// of several packages running at once do not collide; directories left by
// processes that have exited are removed by the next build. It fails tb if
// the go command cannot build the program.
func BuildServer(tb testing.TB) string {
	tb.Helper()
	built.once.Do(func() { built.path, built.err = build() })
	if built.err != nil {
		tb.Fatalf("build test server: %v", built.err)
	}
	return built.path
}

func build() (string, error) {
	sweepBuildDirs()
	dir := filepath.Join(os.TempDir(), buildDirPrefix+strconv.Itoa(os.Getpid()))
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create build directory: %w", err)
	}
	bin := filepath.Join(dir, "testserver")
	if filepath.Separator == '\\' {
		bin += ".exe"
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("find the go command: %w", err)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(gocmd, "build", "-o", bin, ServerPackage)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", ServerPackage, err, out)
	}
	return bin, nil
}

// sweepBuildDirs removes the build directories of processes that no longer
// exist. Errors are ignored: a directory left behind only costs disk space.
func sweepBuildDirs() {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), buildDirPrefix))
		if !e.IsDir() || !strings.HasPrefix(e.Name(), buildDirPrefix) || err != nil || pid == os.Getpid() {
			continue
		}
		if !processExists(pid) {
			os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
}

// processExists reports whether a process with the given id exists. Where
// that cannot be told, it reports true.
func processExists(pid int) bool {
	if runtime.GOOS == "windows" {
		return true
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
