package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// rescuePaths names the files a rescue of the cassette at path writes:
// the JSONL of what can still be read and the cassette imported from it.
// They lie beside path and are named after it, and are neither path nor
// a file that exists, so that the suggested commands overwrite nothing.
func rescuePaths(path string) (jsonl, db string) {
	base := strings.TrimSuffix(path, filepath.Ext(path)) + "-rescued"
	for i := 1; ; i++ {
		n := base
		if i > 1 {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		jsonl, db = n+".jsonl", n+".db"
		if i == 100 || jsonl != path && db != path && !exists(jsonl) && !exists(db) {
			return jsonl, db
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// rescueHint is the way to keep what the cassette at path still holds
// when packs of its frames are damaged: export --rescue passes over them.
func rescueHint(path string) string {
	jsonl, db := rescuePaths(path)
	return "keep what can still be read: mcpvcr export --rescue --cassette " + path + " -o " + jsonl +
		", then mcpvcr import " + jsonl + " --cassette " + db
}
