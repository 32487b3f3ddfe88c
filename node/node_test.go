package node

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/marcopolo/simnet"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// testConfig is the local profile shrunk so a round takes well under a
// second on two cores.
func testConfig() config.Config {
	c := config.LocalConfig()
	c.Node.Listen = []string{"/ip4/127.0.0.1/tcp/0"}
	c.Miner.AnnounceInterval = config.Duration{Duration: 300 * time.Millisecond}
	c.Miner.Workers = 1
	c.Validator.RoundInterval = config.Duration{Duration: 400 * time.Millisecond}
	c.Validator.Size, c.Validator.K, c.Validator.TileBytes = 128, 128, 4096
	c.Validator.Deadline = config.Duration{Duration: 5 * time.Second}
	c.Validator.MinSteps, c.Validator.MaxSteps = 6, 12
	// Rounds of about 300 ms: several per 2-second epoch (epoch_test.go).
	c.Validator.RoundTarget, c.Validator.RoundTargetCPU = config.Duration{Duration: 300 * time.Millisecond}, config.Duration{Duration: 300 * time.Millisecond}
	// hostround_test.go turns host rounds on.
	c.Validator.HostCPUWindow, c.Validator.HostRAMSteps, c.Validator.HostPlotSteps = config.Duration{}, 0, 0
	return c
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type testNet struct {
	t       *testing.T
	ctx     context.Context
	cancel  context.CancelFunc
	records chan *store.RoundRecord
	wg      sync.WaitGroup
	closers []func() error   // stores, closed after every node has stopped
	stops   map[*Node]func() // each node's stop: cancels its Run, waits for it to return
	sim     *simnet.Simnet   // nil: nodes listen on loopback (newSimTestNet)
	hosts   int              // nodes given a simulated address so far
}

func newTestNet(t *testing.T) *testNet {
	ctx, cancel := context.WithCancel(t.Context())
	tn := &testNet{t: t, ctx: ctx, cancel: cancel, records: make(chan *store.RoundRecord, 1000), stops: map[*Node]func(){}}
	t.Cleanup(func() {
		tn.cancel()
		tn.wg.Wait()
		for _, c := range tn.closers {
			c()
		}
	})
	return tn
}

// start creates a node with a fresh key and runs it until the test ends.
func (tn *testNet) start(role Role, cfg config.Config, be kernels.Backend) *Node {
	tn.t.Helper()
	n, _ := tn.startWith(role, cfg, be, nil)
	return n
}

// startWith is start with a hook to adjust the node's options; it also
// returns the node's store.
func (tn *testNet) startWith(role Role, cfg config.Config, be kernels.Backend, adjust func(*Options)) (*Node, *store.Store) {
	tn.t.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		tn.t.Fatal(err)
	}
	st, err := store.Open("db", store.Options{FS: memFS()})
	if err != nil {
		tn.t.Fatal(err)
	}
	tn.closers = append(tn.closers, st.Close)
	o := Options{Config: cfg, Role: role, Key: key, Logger: testLogger(tn.t), Backend: be, Store: st}
	tn.onSim(&o)
	if role == RoleValidator {
		o.OnRecord = func(r *store.RoundRecord) {
			select {
			case tn.records <- r:
			default: // nobody is counting records in this test
			}
		}
	}
	if adjust != nil {
		adjust(&o)
	}
	n, err := New(tn.ctx, o)
	if err != nil {
		tn.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(tn.ctx)
	ran := make(chan struct{})
	tn.stops[n] = func() { cancel(); <-ran }
	tn.wg.Add(1)
	go func() {
		defer tn.wg.Done()
		defer close(ran)
		n.Run(ctx)
	}()
	return n, st
}

// stop ends n's Run, which closes n, and waits until it has returned. In a
// bubble, calling n.Close alongside Run's own Close would stall the clock:
// the second caller waits on a mutex (sync.Once), which is not durably
// blocking, while the first waits for goroutines that need time to pass.
func (tn *testNet) stop(n *Node) {
	tn.stops[n]()
}

func (tn *testNet) connect(a, b *Node) {
	tn.t.Helper()
	if err := a.Connect(tn.ctx, b.Addrs()...); err != nil {
		tn.t.Fatal(err)
	}
}

// waitDisconnected waits until a holds no connection to p: a's Connect to
// p dials nothing while an old connection, closed at the other end, seems
// open.
func (tn *testNet) waitDisconnected(a *Node, p peer.ID) {
	tn.t.Helper()
	sub, err := a.host.EventBus().Subscribe(new(event.EvtPeerConnectednessChanged))
	if err != nil {
		tn.t.Fatal(err)
	}
	defer sub.Close()
	deadline := time.After(30 * time.Second)
	for a.host.Network().Connectedness(p) == network.Connected {
		select {
		case <-sub.Out():
		case <-deadline:
			tn.t.Fatalf("%s still connected to %s", a.ID(), p)
		}
	}
}

// waitVerified consumes records until every (validator, miner) pair has
// `rounds` verified rounds; any failed record for those pairs fails the test.
func (tn *testNet) waitVerified(validators, miners []*Node, rounds int, timeout time.Duration) {
	tn.t.Helper()
	want := map[string]int{}
	for _, v := range validators {
		for _, m := range miners {
			want[string(v.ID())+string(m.ID())] = rounds
		}
	}
	deadline := time.After(timeout)
	for len(want) > 0 {
		select {
		case r := <-tn.records:
			k := string(r.Validator) + string(r.Miner)
			if _, ok := want[k]; !ok {
				continue
			}
			if r.Verdict != store.VerdictVerified {
				tn.t.Fatalf("round %d of miner %s failed: %s", r.Round, peer.ID(r.Miner), r.Reason)
			}
			if r.TFLOPS <= 0 || r.CommitNanos <= 0 || len(r.Tiles) == 0 || len(r.Commitment) == 0 {
				tn.t.Fatalf("verified record lacks evidence: %+v", r)
			}
			if want[k]--; want[k] == 0 {
				delete(want, k)
			}
		case <-deadline:
			tn.t.Fatalf("timed out; still waiting for %d validator/miner pairs", len(want))
		}
	}
}

func TestValidatorAndThreeMiners(t *testing.T) {
	tn := newTestNet(t)
	cfg := testConfig()
	v := tn.start(RoleValidator, cfg, nil)
	var miners []*Node
	for i := 0; i < 3; i++ {
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		miners = append(miners, m)
	}
	tn.waitVerified([]*Node{v}, miners, 3, 90*time.Second)
}

func TestTwoValidatorsScoreTheSameMiners(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		v1 := tn.start(RoleValidator, cfg, nil)
		v2 := tn.start(RoleValidator, cfg, nil)
		tn.connect(v1, v2)
		var miners []*Node
		for i := 0; i < 2; i++ {
			m := tn.start(RoleMiner, cfg, cpu.Backend{})
			tn.connect(m, v1)
			tn.connect(m, v2)
			miners = append(miners, m)
		}
		tn.waitVerified([]*Node{v1, v2}, miners, 2, 90*time.Second)
	})
}

// stallingBackend signals when a miner starts multiplying and then blocks
// until the miner shuts down: a miner that stops mid-round.
type stallingBackend struct {
	cpu.Backend
	started chan struct{}
}

func (b stallingBackend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	return stallingJob{j, b.started}, err
}

type stallingJob struct {
	kernels.Job
	started chan struct{}
}

func (j stallingJob) Multiply(ctx context.Context) error {
	select {
	case j.started <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return ctx.Err()
}

func TestMinerStopsMidRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Validator.Deadline = config.Duration{Duration: 2 * time.Second}
		v := tn.start(RoleValidator, cfg, nil)
		started := make(chan struct{}, 1)
		m := tn.start(RoleMiner, cfg, stallingBackend{started: started})
		tn.connect(m, v)
		select {
		case <-started:
		case <-time.After(60 * time.Second):
			t.Fatal("miner never received a challenge")
		}
		tn.stop(m)
		deadline := time.After(60 * time.Second)
		for {
			select {
			case r := <-tn.records:
				if peer.ID(r.Miner) != m.ID() {
					continue
				}
				// The round stream closes with the miner (or, had the close
				// not reached the validator, the deadline passes).
				if r.Verdict != store.VerdictFailed || !strings.Contains(r.Reason, "round stream closed") && !strings.Contains(r.Reason, "within") {
					t.Fatalf("stopped miner got %v: %q", r.Verdict, r.Reason)
				}
				return
			case <-deadline:
				t.Fatal("no verdict for the stopped miner")
			}
		}
	})
}

func memFS() vfs.FS { return vfs.NewMem() }

// pairedBackend is a two-device backend whose jobs meet in Multiply: each
// waits until the other device's job has started multiplying, so a miner that
// ran sub-challenges one after another never gets past the first.
type pairedBackend struct {
	cpu.Backend
	arrived [2]chan struct{}
	once    *[2]sync.Once // later rounds find the channels closed and pass
}

func (pairedBackend) Devices() int { return 2 }

func (b pairedBackend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	return pairedJob{j, b.arrived[o.Device], b.arrived[1-o.Device], &b.once[o.Device]}, err
}

type pairedJob struct {
	kernels.Job
	mine, other chan struct{}
	once        *sync.Once
}

func (j pairedJob) Multiply(ctx context.Context) error {
	j.once.Do(func() { close(j.mine) })
	select {
	case <-j.other:
		return j.Job.Multiply(ctx)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func TestMinerRunsSubChallengesOnDevicesConcurrently(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		v := tn.start(RoleValidator, cfg, nil)
		be := pairedBackend{arrived: [2]chan struct{}{make(chan struct{}), make(chan struct{})}, once: new([2]sync.Once)}
		m, _ := tn.startWith(RoleMiner, cfg, be, func(o *Options) {
			o.GPUs = []*pb.GPU{{Name: "gpu0", Uuid: "GPU-0"}, {Name: "gpu1", Uuid: "GPU-1"}}
		})
		tn.connect(m, v)
		deadline := time.After(90 * time.Second)
		for {
			select {
			case r := <-tn.records:
				if peer.ID(r.Miner) != m.ID() {
					continue
				}
				if r.Verdict != store.VerdictVerified {
					t.Fatalf("two-device miner got %v: %q", r.Verdict, r.Reason)
				}
				if _, ps, err := protocol.PeekChallenge(r.Challenge); err != nil || len(ps) != 2 {
					t.Fatalf("verified round has %d sub-challenges (%v), want one per device", len(ps), err)
				}
				return
			case <-deadline:
				t.Fatal("no verdict for the two-device miner")
			}
		}
	})
}

// TestValidatorRestartKeepsRoundNumbers restarts a validator on the same
// key and store within an epoch: its new rounds are numbered above every
// number its first run handed out, stored or not (a round its shutdown
// interrupted stores no record), so every new record is stored and no
// miner sees a round number twice.
func TestValidatorRestartKeepsRoundNumbers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tn := newSimTestNet(t)
		cfg := testConfig()
		cfg.Network.EpochLength = config.Duration{Duration: time.Hour} // one epoch for the whole test
		var mu sync.Mutex
		var first []uint64          // rounds the first run challenged
		next := make(chan struct{}) // closed at its first challenge after two verified rounds
		verified := false
		v, st := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.OnGossip = challenges(func(r uint64) {
				mu.Lock()
				defer mu.Unlock()
				if first = append(first, r); verified && next != nil {
					close(next)
					next = nil
				}
			})
		})
		m := tn.start(RoleMiner, cfg, cpu.Backend{})
		tn.connect(m, v)
		tn.waitVerified([]*Node{v}, []*Node{m}, 2, 90*time.Second)
		mu.Lock()
		verified, wait := true, next
		mu.Unlock()
		<-wait
		tn.stop(v) // at the challenge's instant: that round is in flight
		mu.Lock()
		defer mu.Unlock()
		tn.waitDisconnected(m, v.ID())
		handed := slices.Max(first)
		challenged := make(chan uint64, 100) // rounds the restarted validator challenges
		v2, _ := tn.startWith(RoleValidator, cfg, nil, func(o *Options) {
			o.Key, o.Store = v.key, st
			o.OnGossip = challenges(func(r uint64) {
				select {
				case challenged <- r:
				default:
				}
			})
		})
		tn.connect(m, v2)
		deadline := time.After(90 * time.Second)
		for {
			select {
			case r := <-tn.records:
				if r.Round <= handed {
					continue // a round of the first run, reported late
				}
				if n := <-challenged; n <= handed {
					t.Fatalf("first round after the restart is %d; the first run handed out up to %d", n, handed)
				}
				if r.Verdict != store.VerdictVerified {
					t.Fatalf("round %d after the restart failed: %s", r.Round, r.Reason)
				}
				return
			case <-deadline:
				t.Fatalf("no round stored after the restart (first run handed out up to %d)", handed)
			}
		}
	})
}

// challenges is an OnGossip hook passing each challenge's round to f.
func challenges(f func(round uint64)) func(string, *protocol.Opened, time.Time) {
	return func(_ string, o *protocol.Opened, _ time.Time) {
		if c, ok := o.Msg.(*pb.Challenge); ok {
			f(c.Round)
		}
	}
}
