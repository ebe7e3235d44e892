// Package leaky leaks internal types in every way apicheck looks at.
package leaky

import "github.com/mcpvcr/mcpvcr/internal/jsonrpc"

// T has a field of an internal type.
type T struct {
	Field jsonrpc.Kind
}

// E embeds an internal type.
type E struct {
	jsonrpc.Message
}

// Func returns an internal type.
func Func() jsonrpc.Message { return jsonrpc.Message{} }

// Method takes an internal type.
func (T) Method(jsonrpc.Kind) {}

// Var has an internal type.
var Var jsonrpc.Kind

// Alias names an internal type: accepted, and so is what uses it.
type Alias = jsonrpc.Kind

// UsesAlias has the alias's type.
var UsesAlias Alias

// Composite is a type built from an internal one: its elements have no
// name users can write.
type Composite = []jsonrpc.Kind

// Inferred is an internal value.
var Inferred = jsonrpc.KindBatch

// ok uses internal types where users cannot see them.
func ok() jsonrpc.Kind { return jsonrpc.KindEmpty }
