// Package derive lets mcpvcr's packages derive a store.Frame and keep the
// JSON-RPC message parsed on the way. store.Frame.Derive cannot return it:
// its type is internal, and no exported identifier of store may use an
// internal type. The recorder, which parses every frame it forwards,
// would otherwise parse each one twice.
package derive

import "github.com/mcpvcr/mcpvcr/internal/jsonrpc"

// Frame derives f, which must be a *store.Frame on a stream of kind kind
// (a store.StreamKind), as store.Frame.Derive does, and returns the
// message it parsed from the frame's Data. Package store sets it when it
// is initialised, before any package that imports store runs.
var Frame func(f any, kind int) jsonrpc.Message
