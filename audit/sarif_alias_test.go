package audit

import "github.com/mcpvcr/mcpvcr/internal/sarif"

// sarifLog is the log the tests decode a written SARIF report into.
type sarifLog = sarif.Log
