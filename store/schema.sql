-- The cassette schema, as numbered forward migrations.
--
-- Each migration starts with a line "-- migration N" (N = 1, 2, 3, ...),
-- runs in its own transaction and ends by setting PRAGMA user_version to
-- N (Open checks that it did). Never edit a migration that has shipped:
-- add a new one.
--
-- Conventions: enums are stored by name ("c2s", "request", "post"),
-- durations as integer nanoseconds from session start (*_ns), wall-clock
-- times as RFC 3339 text in UTC, maps (labels, headers) as JSON objects.
-- Large BLOB columns come last so that queries on the other columns never
-- read overflow pages.

-- migration 1
PRAGMA application_id = 1835233398; -- 0x6D637076, "mcpv"

CREATE TABLE sessions (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	name        TEXT    NOT NULL DEFAULT '',
	transport   TEXT    NOT NULL,          -- stdio, http, sse
	revision    TEXT    NOT NULL DEFAULT '',
	era         TEXT    NOT NULL DEFAULT '',
	upstream    TEXT    NOT NULL DEFAULT '',
	external_id TEXT    NOT NULL DEFAULT '',
	started_at  TEXT,                      -- NULL when unknown
	ended_at    TEXT,                      -- NULL while open
	exit_code   INTEGER NOT NULL DEFAULT -1,
	labels      TEXT,                      -- JSON object; NULL when empty
	note        TEXT    NOT NULL DEFAULT '',
	client_info BLOB,                      -- raw JSON exactly as seen
	server_info BLOB
);

CREATE TABLE streams (
	id              INTEGER PRIMARY KEY AUTOINCREMENT,
	session_id      INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	kind            TEXT    NOT NULL,      -- stdin, stdout, stderr, post, get, ...
	method          TEXT    NOT NULL DEFAULT '',
	url             TEXT    NOT NULL DEFAULT '',
	status          INTEGER NOT NULL DEFAULT 0,
	resumes_id      INTEGER,               -- a stream of the same session; checked by Check
	last_event_id   TEXT    NOT NULL DEFAULT '',
	opened_ns       INTEGER NOT NULL DEFAULT 0,
	closed_ns       INTEGER NOT NULL DEFAULT 0,
	end_kind        TEXT    NOT NULL DEFAULT 'open',
	err             TEXT    NOT NULL DEFAULT '',
	request_header  TEXT,                  -- JSON object; NULL when empty
	response_header TEXT
);

CREATE INDEX streams_session ON streams (session_id);

CREATE TABLE frames (
	id          INTEGER PRIMARY KEY,
	session_id  INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	seq         INTEGER NOT NULL,          -- total order within the session, from 1
	stream_id   INTEGER REFERENCES streams (id),
	direction   TEXT    NOT NULL,          -- c2s, s2c
	offset_ns   INTEGER NOT NULL,
	kind        TEXT    NOT NULL,          -- request, notification, result, error, batch, empty, invalid
	rpc_id      TEXT,                      -- the raw id token (1 and "1" differ); NULL when none
	method      TEXT,
	batch       INTEGER NOT NULL DEFAULT 0,
	malformed   INTEGER NOT NULL DEFAULT 0,
	sse         INTEGER NOT NULL DEFAULT 0,
	sse_id      TEXT,
	sse_has_id  INTEGER NOT NULL DEFAULT 0,
	sse_event   TEXT,
	sse_retry   INTEGER NOT NULL DEFAULT -1,
	comment     INTEGER NOT NULL DEFAULT 0,
	raw         BLOB    NOT NULL,          -- exactly the bytes on the wire
	data        BLOB                       -- the JSON-RPC payload; NULL when it equals raw
);

CREATE UNIQUE INDEX frames_session_seq ON frames (session_id, seq);
CREATE INDEX frames_session_method ON frames (session_id, method);
CREATE INDEX frames_stream ON frames (stream_id);

-- The elements of batch frames, so that their ids and methods can be queried.
CREATE TABLE frame_members (
	session_id INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	idx        INTEGER NOT NULL,           -- position in the batch, from 0
	kind       TEXT    NOT NULL,
	rpc_id     TEXT,
	method     TEXT,
	PRIMARY KEY (session_id, seq, idx),
	FOREIGN KEY (session_id, seq) REFERENCES frames (session_id, seq) ON DELETE CASCADE
) WITHOUT ROWID;

CREATE INDEX frame_members_method ON frame_members (method);

PRAGMA user_version = 1;

-- migration 2
-- The (session_id, method) index on frames served no query of mcpvcr's and
-- cost a fifth of the insert time of small frames. For ad-hoc SQL over a
-- large cassette, create it yourself.
DROP INDEX frames_session_method;

PRAGMA user_version = 2;

-- migration 3
-- Replay's index of ended sessions: per session, a hash of each protocol
-- frame as replay matches it (a client frame's normalised match key, a
-- server frame's payload), so that replay can find the candidates for a
-- client and tell which sessions agree without loading them. Built by
-- replay on first use (mode names the hashing), dropped with its session.
CREATE TABLE replay_index (
	session_id INTEGER PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
	mode       TEXT    NOT NULL,
	hashes     BLOB    NOT NULL
);

-- Replay's candidate tree over one set of sessions (name says which):
-- a node stands for the sessions that share their first `shared` frames;
-- its children part where they differ, each holding the hash of its
-- members' frame there (0 when they have none). rep is the first session
-- of a node. Replay starts from the root and reads children as the client
-- goes, so that its start does not grow with the cassette.
CREATE TABLE replay_tree (
	name   TEXT    NOT NULL,
	node   INTEGER NOT NULL,
	parent INTEGER NOT NULL,               -- 0 for the root
	hash   INTEGER NOT NULL,
	shared INTEGER NOT NULL,
	rep    INTEGER NOT NULL,
	size   INTEGER NOT NULL,
	PRIMARY KEY (name, node)
) WITHOUT ROWID;

CREATE INDEX replay_tree_parent ON replay_tree (name, parent, hash);

-- A replay of many sessions lists those of one transport and the few with
-- labels; these small indexes spare it a scan of every session row.
CREATE INDEX sessions_transport ON sessions (transport, id);
CREATE INDEX sessions_labelled ON sessions (id) WHERE labels IS NOT NULL;

PRAGMA user_version = 3;

-- migration 4
-- The stream_id index on frames served no query of mcpvcr's (frames are
-- read by session, in seq order) and cost a tenth of the insert time of
-- a small frame. Deleting a session turns foreign keys off for its
-- transaction, since without the index every deleted stream would scan
-- the frames for children (it deletes the session's frames first).
DROP INDEX frames_stream;

PRAGMA user_version = 4;

-- migration 5
-- A frame longer than the recorder's limit (mcpvcr record --max-frame) is
-- forwarded whole and stored cut to the limit: oversize holds its true
-- length on the wire, 0 when raw is the whole frame. Added at the end of
-- the row, after the blobs: only frames that are read whole read it.
ALTER TABLE frames ADD COLUMN oversize INTEGER NOT NULL DEFAULT 0;

PRAGMA user_version = 5;

-- migration 6
-- Packs: runs of a session's server frames with consecutive seqs, stored
-- as one row rather than one row each (the writer's cost of a small frame
-- was mostly its row: SQLite's per-row work and the (session_id, seq)
-- index). frames holds frames first_seq to last_seq, encoded one after
-- another (see pack.go: a version byte, then per frame its columns as
-- varints and length-prefixed bytes); mcpvcr reads them as if they were
-- rows of frames, merged with those by seq. A seq is in frames or in
-- one pack, never both. Client frames, batch frames (frame_members refer
-- to their rows) and frames of more than 16 KiB stay rows. Ad-hoc SQL
-- over frames sees only the rows: use mcpvcr export for every frame.
CREATE TABLE frame_packs (
	id         INTEGER PRIMARY KEY,
	session_id INTEGER NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
	first_seq  INTEGER NOT NULL,
	last_seq   INTEGER NOT NULL,
	frames     BLOB    NOT NULL
);

CREATE UNIQUE INDEX frame_packs_session_seq ON frame_packs (session_id, first_seq);

PRAGMA user_version = 6;

-- migration 7
-- Replay's index of what an HTTP replay answers from every session at
-- once rather than from one conversation: the 2026-07-28 exchanges, the
-- requests a server refused for their shape, the OAuth exchanges. One
-- row per recorded exchange (and per shape of request, kind 'door'),
-- found by kind and key (a request's match key under the rules name was
-- built with), in recorded order (ord); info is what a lookup compares
-- besides the key (a request's protocol shape, say). Replay reads the
-- rows a request needs and loads only the sessions they name, so that
-- its start and its answers do not grow with the cassette. Built by
-- replay on first use; a cassette keeps the one it was last replayed
-- with, like replay_tree.
CREATE TABLE replay_exchanges (
	name       TEXT    NOT NULL,
	kind       TEXT    NOT NULL,
	key        TEXT    NOT NULL,
	info       TEXT    NOT NULL,
	ord        INTEGER NOT NULL,
	session_id INTEGER NOT NULL,
	stream_id  INTEGER NOT NULL,
	PRIMARY KEY (name, kind, key, info, ord)
) WITHOUT ROWID;

PRAGMA user_version = 7;

-- migration 8
-- Runs of SSE events: an entry of a frame_packs blob may hold several
-- events of one stream as their blocks came (the recorder's read of a
-- busy stream), which mcpvcr splits and derives when it reads them (see
-- pack.go and eventrun.go). No table changes; the version makes a build
-- that cannot read such entries refuse the file as newer than it.
PRAGMA user_version = 8;

-- migration 9
-- Compressed packs: a frame_packs blob may be an S2 block of a pack's
-- bytes (see packz.go), which mcpvcr decompresses when it reads it. No
-- table changes; the version makes a build that cannot read such packs
-- refuse the file as newer than it.
PRAGMA user_version = 9;

-- migration 10
-- The true length of a cut frame whose raw bytes are written into its
-- row in pieces (see blobio.go): such a row holds oversize 1, which no
-- cut frame can have, and its length is here. SQLite keeps a zeroblob
-- unexpanded only when no bytes follow it in the row; a length in the
-- row's last column made it expand the blob to its full size, twice over.
CREATE TABLE frame_oversize (
	session_id INTEGER NOT NULL,
	seq        INTEGER NOT NULL,
	oversize   INTEGER NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

PRAGMA user_version = 10;

-- migration 11
-- A cache of what a reader derives from the sessions and keeps so as not
-- to derive it again (see cache.go): byte values under byte keys, in
-- tables by name, read by key prefix in key order. An entry derived from
-- one session names it (session_id) and is deleted with it; 0 for none.
-- Replay keeps its index of the sessions, its candidate tree and its
-- index of exchanges here, in an encoding of its own; it replaces the
-- three tables replay had, whose contents replay builds again once.
CREATE TABLE cache (
	name       TEXT    NOT NULL,
	key        BLOB    NOT NULL,
	session_id INTEGER NOT NULL DEFAULT 0,
	value      BLOB    NOT NULL,
	PRIMARY KEY (name, key)
) WITHOUT ROWID;

CREATE INDEX cache_session ON cache (session_id) WHERE session_id <> 0;

DROP TABLE replay_index;
DROP TABLE replay_tree;
DROP TABLE replay_exchanges;

PRAGMA user_version = 11;
