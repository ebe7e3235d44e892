// Package replayindex keeps replay's index of a cassette's sessions, so
// that a replay reads only the sessions a client can still match and its
// start does not grow with the cassette. It holds three things, each
// built by replayer and kept in the cassette's cache (store.DB.CachePut)
// in an encoding of this package's, or in memory when the cassette
// cannot be written:
//
//   - hashes: per session, a hash of each protocol frame as replay
//     matches it (PutHashes, Hashes), under a mode naming the hashing;
//   - the candidate tree of a set of sessions (Build, PutTree, OpenTree,
//     MemTree): a node stands for the sessions that share their first
//     Shared frames, its children for those that agree on the frame
//     where they part;
//   - exchange rows (PutExchanges, OpenExchanges, MemExchanges): what
//     HTTP replay answers from every session at once, found by kind and
//     key, in recorded order; replay's own, and the OAuth exchanges
//     authwire.Handler answers, each in a cache table of its own.
//
// A stored tree or exchange index is named by its caller (the hashing
// mode and the set of sessions); a cassette keeps the last one stored of
// each, as it keeps one set of hashes per session. Replay reads the tree
// and the rows through the Tree and Exchanges interfaces, whichever
// holds them.
package replayindex
