package protocol

import (
	"bufio"
	"fmt"

	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol/pb"
	"google.golang.org/protobuf/proto"
)

// MaxRoundFrame bounds one frame of the round stream: the largest is a
// commitment envelope.
const MaxRoundFrame = 16 << 10

// WriteRoundFrame encodes and writes one round-stream frame.
func WriteRoundFrame(w *bufio.Writer, f *pb.RoundFrame) error {
	b, err := proto.Marshal(f)
	if err != nil {
		return err
	}
	if len(b) > MaxRoundFrame {
		return fmt.Errorf("%w: round frame of %d bytes", ErrTooLarge, len(b))
	}
	if err := WriteFrame(w, b); err != nil {
		return err
	}
	return w.Flush()
}

// ReadRoundFrame reads and validates one round-stream frame (SPEC.md §16).
// Envelopes inside (challenge, commitment) are only bounded here; the
// caller opens them.
func ReadRoundFrame(r *bufio.Reader) (*pb.RoundFrame, error) {
	b, err := ReadFrame(r, MaxRoundFrame)
	if err != nil {
		return nil, err
	}
	f := new(pb.RoundFrame)
	if err := proto.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("%w: round frame: %v", ErrMalformed, err)
	}
	switch m := f.Msg.(type) {
	case *pb.RoundFrame_Challenge:
		if len(m.Challenge) > maxEnvelope[pb.MessageType_CHALLENGE] {
			return nil, fmt.Errorf("%w: challenge of %d bytes", ErrTooLarge, len(m.Challenge))
		}
	case *pb.RoundFrame_Commitment:
		if len(m.Commitment) > maxEnvelope[pb.MessageType_COMMITMENT] {
			return nil, fmt.Errorf("%w: commitment of %d bytes", ErrTooLarge, len(m.Commitment))
		}
	case *pb.RoundFrame_Root:
		if m.Root == nil || m.Root.Step >= proof.MaxSteps {
			return nil, invalid("root frame without a step below %d", proof.MaxSteps)
		}
		if err := checkRoots(m.Root.Roots, MaxSubChallenges); err != nil {
			return nil, err
		}
	case *pb.RoundFrame_Beacon:
		if m.Beacon == nil || m.Beacon.Step >= proof.MaxSteps || len(m.Beacon.Beacon) != 32 {
			return nil, invalid("beacon frame: step below %d and 32 bytes wanted", proof.MaxSteps)
		}
	case *pb.RoundFrame_Result:
		if m.Result == nil || len(m.Result.Reason) > MaxErrorString {
			return nil, invalid("result frame without a result or with a reason over %d bytes", MaxErrorString)
		}
	default:
		return nil, invalid("empty round frame")
	}
	return f, nil
}

// checkRoots checks 1..max roots of 32 bytes each.
func checkRoots(roots [][]byte, max int) error {
	if len(roots) < 1 || len(roots) > max {
		return invalid("%d roots, want 1..%d", len(roots), max)
	}
	for i, r := range roots {
		if len(r) != 32 {
			return invalid("root %d is %d bytes", i, len(r))
		}
	}
	return nil
}
