package store

import "fmt"

// The bounds of a pack, which a read checks before it decodes one: a
// hostile file could claim more frames, and bytes, than any pack the
// writer makes, in a few bytes (a compressed pack of 27 bytes decoded to
// 8 MiB of 599,186 empty frames). unpack checks the frames a pack claims
// (checkClaim) and its entries as it decodes them (tooManyEntries);
// decompressPack checks the bytes a compressed pack claims
// (maxPackDecoded, maxSeqDecoded).

// Bounds of one pack. A frame bigger than maxChunked is a row of its own.
// maxPackFrames bounds its entries (frames and runs of events), and
// maxPackBytes their raw and data bytes.
const (
	maxPackFrames = 256
	maxPackBytes  = 256 << 10
)

// minRunEvent is the fewest bytes of an event that a read of a run
// accepts: "data:{" and a blank line (sserun.Fields; the recorder makes
// runs of events of at least "data: {" and a blank line, sserun.Blocks).
const minRunEvent = 8 // len("data:{\n\n")

// maxPackSeqs bounds the frames (seqs) a pack may hold: its entries, and
// the events of its runs, whose bytes maxPackBytes bounds. A read refuses
// a pack that claims more before it decodes it.
const maxPackSeqs = maxPackFrames + maxPackBytes/minRunEvent

// maxPackDecoded bounds the length a compressed pack may claim, so that a
// damaged or hostile file cannot make a read allocate more than any pack
// holds. The writer packs at most maxPackBytes of raw and data, and the
// other columns of a frame are parts of those or a few varints: 8 MiB is
// far above that (TestPackZ_Largest).
const maxPackDecoded = 8 << 20

// maxSeqDecoded bounds the bytes of a pack per frame (seq) it holds: a
// run of events holds at most maxRunBytes of their blocks, a frame at
// most maxChunked of raw and data together, besides its id, method and
// event fields (parts of those) and a few varints.
const maxSeqDecoded = max(maxRunBytes, 4*maxChunked) + 1<<10

// checkClaim fails with errBadPack when a pack of a session claims frames
// first to last that no pack holds: none, from below 1, or more than
// maxPackSeqs.
func checkClaim(sessionID, first, last int64) error {
	if last < first || first < 1 {
		return fmt.Errorf("session %d: frames %d to %d: %w", sessionID, first, last, errBadPack)
	}
	if last-first >= maxPackSeqs {
		return fmt.Errorf("session %d: frames %d to %d: %w: a pack claims %d frames, and holds at most %d",
			sessionID, first, last, errBadPack, uint64(last-first)+1, maxPackSeqs)
	}
	return nil
}

// tooManyEntries is the error of a pack of frames first to last that
// holds more than maxPackFrames entries.
func tooManyEntries(sessionID, first, last int64) error {
	return fmt.Errorf("session %d: frames %d to %d: %w: more than the %d entries a pack holds", sessionID, first, last, errBadPack, maxPackFrames)
}
