package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mattn/go-sqlite3"
)

// plainLineError says what is wrong with a line of an export in the
// file's terms: the field as the file names it, what it holds and what it
// should hold, or where the line stops being JSON. encoding/json's own
// messages name the Go types the line is decoded into ("Go struct field
// frameIn.frameRecord.seq of type int64"), which mean nothing to someone
// fixing a file.
func plainLineError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
		if field == "" {
			return fmt.Errorf("the line holds %s; want a JSON object", jsonValue(te.Value))
		}
		return fmt.Errorf("field %q holds %s; want %s", field, jsonValue(te.Value), wantOf(te.Type))
	case errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		return errors.New("the line ends before its JSON does (was it cut short?)")
	case errors.As(err, &se):
		return fmt.Errorf("not JSON from byte %d on: %s", se.Offset, se.Error())
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s (an export written by mcpvcr has none; remove it)", name)
	}
	return err
}

// jsonValue names a JSON value as encoding/json describes it ("string",
// "number -5", "bool", "array", "object").
func jsonValue(v string) string {
	switch {
	case v == "bool":
		return "a boolean"
	case strings.HasPrefix(v, "number "):
		return "the number " + strings.TrimPrefix(v, "number ")
	case v == "array", v == "object":
		return "an " + v
	}
	return "a " + v
}

// wantOf names what a field of type t holds, in JSON terms.
func wantOf(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// frameStored is err, the error of storing the frame of line rec, with a
// seq given twice said so rather than as SQLite's UNIQUE constraint.
func frameStored(err error, rec *frameRecord) error {
	if isUniqueViolation(err) {
		return fmt.Errorf("frame %d of session %d appears twice (each seq of a session once)", rec.Seq, rec.Session)
	}
	return err
}

// isUniqueViolation reports whether err is SQLite refusing a row that
// repeats another's key.
func isUniqueViolation(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey) ||
		errors.Is(err, errSeqPacked)
}
