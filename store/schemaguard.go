package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// A cassette's schema is mcpvcr's: a file from someone else may hold
// triggers that run on every write (deleting or renaming what is there),
// views that stand in for a table (and take forever to read), or indexes
// that make an insert fail. So every connection has SQLite distrust the
// schema (PRAGMA trusted_schema = OFF: no function with side effects in
// a trigger, view or index), and Open refuses a file whose sqlite_schema
// holds any object the migrations of its version do not create, before
// it reads or writes anything else. CheckFile reports the same objects
// as a failed check.

// ErrForeignSchema means a cassette holds a table, index, trigger or view
// that mcpvcr never creates. The error (a *ForeignSchemaError) names them.
var ErrForeignSchema = errors.New("the cassette holds objects mcpvcr never creates")

// SchemaObject is an entry of a SQLite file's schema (sqlite_schema).
type SchemaObject struct {
	Type, Name, Table, SQL string
}

func (o SchemaObject) String() string {
	if o.Type == "table" || o.Type == "view" || o.Table == "" {
		return o.Type + " " + quoteName(o.Name)
	}
	return o.Type + " " + quoteName(o.Name) + " on " + quoteName(o.Table)
}

// drop returns the SQL that removes o.
func (o SchemaObject) drop() string {
	return "DROP " + strings.ToUpper(o.Type) + " " + quoteName(o.Name)
}

// quoteName quotes a name for SQL when it is not a plain identifier.
func quoteName(s string) string {
	for i, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (i == 0 || r < '0' || r > '9') {
			return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
		}
	}
	if s == "" {
		return `""`
	}
	return s
}

// ForeignSchemaError is the error of a cassette whose schema holds
// objects that mcpvcr never creates, or holds one of its own tables or
// indexes changed. It matches ErrForeignSchema.
type ForeignSchemaError struct {
	Version int
	// Foreign are the objects the schema version does not have; Changed
	// are those it has under the same name but defined otherwise.
	Foreign, Changed []SchemaObject
}

func (e *ForeignSchemaError) Error() string {
	var parts []string
	for _, o := range e.Foreign {
		parts = append(parts, o.String())
	}
	for _, o := range e.Changed {
		parts = append(parts, o.String()+" (defined otherwise than mcpvcr defines it)")
	}
	return fmt.Sprintf("%v: %s; a cassette from someone else may be hostile, and mcpvcr neither reads nor writes it", ErrForeignSchema, strings.Join(parts, ", "))
}

func (e *ForeignSchemaError) Is(target error) bool { return target == ErrForeignSchema }

// Problems returns one line per object, for a check's report.
func (e *ForeignSchemaError) Problems() []string {
	var ps []string
	for _, o := range e.Foreign {
		ps = append(ps, fmt.Sprintf("%s: mcpvcr never creates it (%s)", o, oneLine(o.SQL)))
	}
	for _, o := range e.Changed {
		ps = append(ps, fmt.Sprintf("%s: not as mcpvcr creates it (%s)", o, oneLine(o.SQL)))
	}
	return ps
}

// Drops returns the SQL that removes the foreign objects, for a hint to
// someone who made them. A changed table cannot be dropped without its
// data: it is left out.
func (e *ForeignSchemaError) Drops() string {
	var s []string
	for _, o := range append(e.Foreign[:len(e.Foreign):len(e.Foreign)], e.Changed...) {
		if o.Type != "table" {
			s = append(s, o.drop()+";")
		}
	}
	return strings.Join(s, " ")
}

// oneLine shortens a definition for a message.
func oneLine(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 120 {
		sql = sql[:117] + "..."
	}
	return sql
}

// ownSchemas[v] is the schema migrations 1 to v create, by type and name.
var ownSchemas = sync.OnceValues(func() ([]map[[2]string]SchemaObject, error) {
	db, err := sql.Open(driverName, ":memory:")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	schemas := []map[[2]string]SchemaObject{{}}
	for _, m := range migrations {
		if _, err := db.ExecContext(ctx, m.sql); err != nil {
			return nil, fmt.Errorf("schema.sql: migration %d: %w", m.version, err)
		}
		objs, err := schemaObjects(ctx, db)
		if err != nil {
			return nil, err
		}
		s := map[[2]string]SchemaObject{}
		for _, o := range objs {
			s[[2]string{o.Type, o.Name}] = o
		}
		schemas = append(schemas, s)
	}
	return schemas, nil
})

// schemaObjects lists the schema of db.
func schemaObjects(ctx context.Context, db *sql.DB) ([]SchemaObject, error) {
	rows, err := db.QueryContext(ctx, "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema ORDER BY rowid")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var objs []SchemaObject
	for rows.Next() {
		var o SchemaObject
		if err := rows.Scan(&o.Type, &o.Name, &o.Table, &o.SQL); err != nil {
			return nil, err
		}
		objs = append(objs, o)
	}
	return objs, rows.Err()
}

// checkSchema returns a *ForeignSchemaError if objs, the schema of a
// cassette of the given version, holds an object that the migrations up
// to that version do not create, or one of theirs defined otherwise.
// SQLite's own objects (named sqlite_...: sqlite_sequence, the indexes of
// primary keys, ANALYZE's statistics) are allowed, and so is an index on
// columns alone of one of its tables (not UNIQUE, not partial, no
// expressions), which someone may have made for their own queries.
func checkSchema(version int, objs []SchemaObject) error {
	schemas, err := ownSchemas()
	if err != nil {
		return err
	}
	if version < 0 || version >= len(schemas) {
		return nil // inspect refuses it
	}
	own := schemas[version]
	e := &ForeignSchemaError{Version: version}
	for _, o := range objs {
		if strings.HasPrefix(strings.ToLower(o.Name), "sqlite_") && (o.Type == "table" || o.Type == "index") {
			continue
		}
		want, ok := own[[2]string{o.Type, o.Name}]
		switch {
		case !ok && plainIndex(o, own):
			// One made for ad-hoc SQL (schema.sql suggests some): it
			// runs nothing and refuses no write.
		case !ok:
			e.Foreign = append(e.Foreign, o)
		case want.Table != o.Table || want.SQL != o.SQL:
			e.Changed = append(e.Changed, o)
		}
	}
	if len(e.Foreign) == 0 && len(e.Changed) == 0 {
		return nil
	}
	return e
}

// plainIndexSQL is an index on columns alone: not UNIQUE, not partial,
// no expressions.
var plainIndexSQL = regexp.MustCompile(`(?i)^CREATE\s+INDEX\s+("?)(\w+)("?)\s+ON\s+("?)(\w+)("?)\s*\(\s*\w+(\s+(ASC|DESC))?(\s*,\s*\w+(\s+(ASC|DESC))?)*\s*\)$`)

// plainIndex reports whether o is an index on columns alone of one of
// the tables of own.
func plainIndex(o SchemaObject, own map[[2]string]SchemaObject) bool {
	if o.Type != "index" {
		return false
	}
	if _, ok := own[[2]string{"table", o.Table}]; !ok {
		return false
	}
	m := plainIndexSQL.FindStringSubmatch(strings.TrimSpace(o.SQL))
	return m != nil && m[1] == m[3] && m[4] == m[6] && m[2] == o.Name && m[5] == o.Table
}

// driverName is the database/sql driver of every connection to a
// cassette: go-sqlite3's, with the schema distrusted.
const driverName = "sqlite3_mcpvcr"

func init() {
	sql.Register(driverName, &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			_, err := c.Exec("PRAGMA trusted_schema = OFF", nil)
			return err
		},
	})
}
