// Package procs is the testnet's child-process mode (--procs): the spec
// a parent writes for each child process, the events a child reports on
// its standard output as JSON lines, and the child processes themselves.
// Which nodes a child runs, and what the parent does with their events,
// stay with package testnet: it hands this package a Sink.
package procs

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Spec is what a child process runs: one node, or a sybil pair.
type Spec struct {
	Out         string        `json:"out"`
	Scale       float64       `json:"scale"`
	EpochLength time.Duration `json:"epoch_length"`
	Validators  int           `json:"validators"`
	Adversaries []string      `json:"adversaries"`
	Members     []Member      `json:"members"`
}

// Member is one node of a child process, whose home the parent prepared.
type Member struct {
	Name      string        `json:"name"`
	Role      string        `json:"role"`
	Profile   string        `json:"profile,omitempty"`
	Adversary string        `json:"adversary,omitempty"`
	Mode      string        `json:"mode,omitempty"`
	Announce  string        `json:"announce,omitempty"`
	Extra     time.Duration `json:"extra,omitempty"`
	Offset    int           `json:"offset,omitempty"`
	Sybil     bool          `json:"sybil,omitempty"`
	Hold      bool          `json:"hold,omitempty"`       // burst: holds its roots
	RootDelay time.Duration `json:"root_delay,omitempty"` // distant: delays its roots and pongs
	Delay     time.Duration `json:"delay,omitempty"`
	// Device names the simulated device it shares with the other members
	// of its child (timeshare); empty: its own.
	Device string `json:"device,omitempty"`
}

// WriteSpec writes spec at path for a child to read.
func WriteSpec(path string, spec Spec) error {
	b, _ := json.Marshal(spec)
	return os.WriteFile(path, b, 0o644)
}

// ReadSpec reads the spec a parent wrote at path.
func ReadSpec(path string) (Spec, error) {
	var spec Spec
	b, err := os.ReadFile(path)
	if err != nil {
		return spec, err
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return spec, fmt.Errorf("spec %s: %w", path, err)
	}
	return spec, nil
}

// event is one JSON line from a child.
type event struct {
	Kind      string             `json:"k"`
	Round     *Round             `json:"round,omitempty"`
	Challenge []byte             `json:"cid,omitempty"`
	At        int64              `json:"at,omitempty"`
	Epoch     uint64             `json:"epoch,omitempty"`
	Scores    map[string]float64 `json:"scores,omitempty"`
	Node      []byte             `json:"node,omitempty"`      // epoch: who stored it; recv: who received it
	Validator []byte             `json:"validator,omitempty"` // epoch: whose record
}

// Round is a round verdict as a node reports it.
type Round struct {
	Epoch, Round uint64
	Validator    string // name
	Miner        string // peer ID
	Verified     bool
	Missed       bool // unanswered: lowers availability, proves no fault
	Reason       string
	TFLOPS       float64
	Verify       int64  // the validator's check, ns
	Sent         int64  // challenge publication, unix ns
	Challenge    []byte // its ID
}

// RoundOf summarises a round validator stored, for the run's bookkeeping.
func RoundOf(validator string, rec *store.RoundRecord) Round {
	ev := Round{Epoch: rec.Epoch, Round: rec.Round, Validator: validator, Miner: peer.ID(rec.Miner).String(),
		Verified: rec.Verdict == store.VerdictVerified, Missed: epoch.MissedRound(rec), Reason: rec.Reason, TFLOPS: rec.TFLOPS, Verify: rec.VerifyNanos, Sent: rec.SentUnixNano}
	if o, err := protocol.Decode(rec.Challenge, pb.MessageType_CHALLENGE); err == nil {
		id := protocol.ID(o.Body)
		ev.Challenge = id[:]
	}
	return ev
}

// Sink is where the parent takes a child's events: what its nodes would
// report to the run in process.
type Sink interface {
	RoundEvent(Round)
	// Received notes challenge's gossip arrival at node, a validator
	// other than its author.
	Received(challenge [32]byte, node peer.ID, at time.Time)
	// EpochRecord notes that node stored validator's record of epoch e.
	EpochRecord(e uint64, node, validator peer.ID)
	// Scores are a validator's gossip scores of its peers.
	Scores(s map[peer.ID]float64)
}

func (ev event) deliver(s Sink) {
	switch ev.Kind {
	case "round":
		if ev.Round != nil {
			s.RoundEvent(*ev.Round)
		}
	case "recv":
		if len(ev.Challenge) == 32 {
			s.Received([32]byte(ev.Challenge), peer.ID(ev.Node), time.Unix(0, ev.At))
		}
	case "epoch":
		s.EpochRecord(ev.Epoch, peer.ID(ev.Node), peer.ID(ev.Validator))
	case "scores":
		sc := map[peer.ID]float64{}
		for k, v := range ev.Scores {
			if p, err := peer.Decode(k); err == nil {
				sc[p] = v
			}
		}
		s.Scores(sc)
	}
}

// Emitter writes a child's events as JSON lines.
type Emitter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEmitter writes events to w, the child's standard output.
func NewEmitter(w io.Writer) *Emitter { return &Emitter{w: w} }

func (e *Emitter) emit(ev event) {
	b, _ := json.Marshal(ev)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.w.Write(append(b, '\n'))
}

// Ready reports that every node of the child has started.
func (e *Emitter) Ready() { e.emit(event{Kind: "ready"}) }

// Round reports a round validator stored.
func (e *Emitter) Round(validator string, rec *store.RoundRecord) {
	ev := RoundOf(validator, rec)
	e.emit(event{Kind: "round", Round: &ev})
}

// Gossip reports a challenge as it arrives at self, a validator other
// than its author.
func (e *Emitter) Gossip(self peer.ID, topic string, o *protocol.Opened, at time.Time) {
	if topic == protocol.TopicChallenge && o.Author != self {
		id := protocol.ID(o.Body)
		e.emit(event{Kind: "recv", Challenge: id[:], Node: []byte(self), At: at.UnixNano()})
	}
}

// EpochRecord reports that node stored validator's record of epoch ep.
func (e *Emitter) EpochRecord(ep uint64, node, validator peer.ID) {
	e.emit(event{Kind: "epoch", Epoch: ep, Node: []byte(node), Validator: []byte(validator)})
}

// Scores reports a validator's gossip scores.
func (e *Emitter) Scores(s map[peer.ID]float64) {
	out := map[string]float64{}
	for p, v := range s {
		out[p.String()] = v
	}
	e.emit(event{Kind: "scores", Scores: out})
}

// Child is a running child process. It fails if it exits before it is
// asked to stop, does not stop within the grace it is given, or writes an
// event its parent cannot read: Err then says which, with the end of its
// log.
type Child struct {
	cmd    *exec.Cmd
	log    string // its standard error
	ready  chan struct{}
	exited chan struct{}

	mu      sync.Mutex
	stopped bool  // Terminate was called
	err     error // why it failed
}

// Start writes spec to specPath and runs exe testnet-node --spec
// specPath, in network namespace ns unless it is empty, passing every
// event it reports to sink until it exits. Its standard error goes to
// specPath's name ending in .log.
func Start(exe, specPath, ns string, spec Spec, sink Sink) (*Child, error) {
	if err := WriteSpec(specPath, spec); err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "testnet-node", "--spec", specPath)
	if ns != "" {
		cmd = exec.Command("ip", "netns", "exec", ns, exe, "testnet-node", "--spec", specPath)
	}
	c := &Child{cmd: cmd, log: strings.TrimSuffix(specPath, filepath.Ext(specPath)) + ".log", ready: make(chan struct{}), exited: make(chan struct{})}
	logf, err := os.Create(c.log)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", exe, err)
	}
	go c.run(out, sink)
	return c, nil
}

func (c *Child) run(out io.Reader, sink Sink) {
	defer close(c.exited)
	bad := c.read(out, sink)
	werr := c.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case bad != nil:
		c.fail(bad)
	case !c.stopped:
		c.fail(fmt.Errorf("exited before it was asked to stop (%v)", werr))
	}
}

// read delivers the child's events to sink until its output ends, and
// returns the first it could not read. It reads to the end regardless, so
// the child never blocks on a full pipe.
func (c *Child) read(out io.Reader, sink Sink) error {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var bad error
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			bad = cmp.Or(bad, fmt.Errorf("unreadable event %.80q: %w", sc.Bytes(), err))
			continue
		}
		if ev.Kind == "ready" {
			select {
			case <-c.ready:
			default:
				close(c.ready)
			}
			continue
		}
		ev.deliver(sink)
	}
	if err := sc.Err(); err != nil {
		bad = cmp.Or(bad, fmt.Errorf("reading its events: %w", err))
		io.Copy(io.Discard, out)
	}
	return bad
}

// fail records err as the child's failure, with the end of its log; the
// first one stands. Called with c.mu held.
func (c *Child) fail(err error) {
	if c.err == nil {
		c.err = fmt.Errorf("%s: %w; its log %s ends: %q", filepath.Base(c.log), err, c.log, logTail(c.log))
	}
}

func logTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 1000 {
		b = b[len(b)-1000:]
	}
	return strings.TrimSpace(string(b))
}

// Ready is closed once every node of the child has started.
func (c *Child) Ready() <-chan struct{} { return c.ready }

// Exited is closed once the child has exited and its events are read.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// Err is why the child failed, nil if it has not.
func (c *Child) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Terminate asks the child to stop.
func (c *Child) Terminate() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.cmd.Process.Signal(syscall.SIGTERM)
}

// Wait waits for the child to exit, killing it after grace, which fails
// it.
func (c *Child) Wait(grace time.Duration) {
	select {
	case <-c.exited:
	case <-time.After(grace):
		c.mu.Lock()
		c.fail(fmt.Errorf("still running %v after it was asked to stop; killed", grace))
		c.mu.Unlock()
		c.cmd.Process.Kill()
		<-c.exited
	}
}

// Connect connects h to the node listening at addr in a child process,
// which may still be starting: it retries briefly.
func Connect(ctx context.Context, h host.Host, addr string) error {
	info, err := peer.AddrInfoFromString(addr)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		if err = h.Connect(ctx, *info); err == nil || i == 50 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
