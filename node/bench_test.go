package node

// Network benchmarks. They only run with -bench, for example
//
//	go test -run XXX -bench 'Gossip|RoundOverhead' -benchtime 1x ./node/
//
// and BENCHMARKS.md records their results. Every wait is bounded in time.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/kernels/cpu"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/plan"
	"github.com/pog-network/pog/proof"
	"github.com/pog-network/pog/proof/sample"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/store"
)

// Gossip benchmark shape.
const (
	benchGossipNodes     = 100
	benchGossipDials     = 6  // each node dials this many random others
	benchGossipPublishes = 20 // measured publishes per benchmark iteration
	benchGossipWarmups   = 10 // at most this many unmeasured publishes first
	benchGossipSeed      = 0x706f67
	benchDeliveryTimeout = 10 * time.Second // per publish, for all receivers
	benchMeshTimeout     = 30 * time.Second
)

// benchGossipMode selects the gossip stack of the 100-node benchmarks.
type benchGossipMode int

const (
	benchGossipPog    benchGossipMode = iota // newPubSub and the challenge topic validator
	benchGossipScored                        // newPubSub, no topic validator
	benchGossipRaw                           // pubsub.NewGossipSub defaults, no topic validator
)

// BenchmarkChallengeGossip100 measures publish-to-delivery latency of a
// signed challenge over 100 loopback nodes whose gossip is built like the
// node's: newPubSub (strict signing, BLAKE3 message IDs, peer scoring) and
// the challenge topic validator (protocol.Open and view rules).
func BenchmarkChallengeGossip100(b *testing.B) { benchGossip100(b, benchGossipPog) }

// BenchmarkScoredGossip100 splits the difference: the node's newPubSub
// options without the topic validator, so the validator's own cost is the
// gap to BenchmarkChallengeGossip100.
func BenchmarkScoredGossip100(b *testing.B) { benchGossip100(b, benchGossipScored) }

// BenchmarkRawGossip100 is the reference: the same hosts, topology and
// payload bytes over pubsub.NewGossipSub with its defaults and no topic
// validator.
func BenchmarkRawGossip100(b *testing.B) { benchGossip100(b, benchGossipRaw) }

type benchGossipNode struct {
	h     host.Host
	topic *pubsub.Topic
	sub   *pubsub.Subscription
	view  *view
}

// benchInflight is one measured publish: receivers append their latency
// until all have it.
type benchInflight struct {
	data []byte
	sent time.Time
	want int
	done chan struct{}

	mu  sync.Mutex
	lat []time.Duration
}

func benchGossip100(b *testing.B, mode benchGossipMode) {
	cfg := testConfig()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runtime.GC()
	debug.FreeOSMemory()

	// Hosts, gossip and subscriptions.
	var rejected atomic.Int64
	nodes := make([]*benchGossipNode, benchGossipNodes)
	defer func() {
		cancel()
		var wg sync.WaitGroup
		for _, n := range nodes {
			if n != nil {
				wg.Add(1)
				go func() { defer wg.Done(); n.h.Close() }()
			}
		}
		wg.Wait()
	}()
	for i := range nodes {
		key, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		h, err := newHost(key, cfg.Node)
		if err != nil {
			b.Fatal(err)
		}
		n := &benchGossipNode{h: h, view: newView(cfg.Network.EpochLength.Duration, cfg.Network.TrustAnyValidator, nil)}
		nodes[i] = n
		var ps *pubsub.PubSub
		switch mode {
		case benchGossipPog:
			ps, err = newPubSub(ctx, h, nil, func(peer.ID) float64 { return 0 })
			if err == nil {
				err = ps.RegisterTopicValidator(protocol.TopicChallenge, benchChallengeValidator(n.view, &rejected))
			}
		case benchGossipScored:
			ps, err = newPubSub(ctx, h, nil, func(peer.ID) float64 { return 0 })
		default:
			ps, err = pubsub.NewGossipSub(ctx, h)
		}
		if err != nil {
			b.Fatal(err)
		}
		if n.topic, err = ps.Join(protocol.TopicChallenge); err != nil {
			b.Fatal(err)
		}
		if n.sub, err = n.topic.Subscribe(); err != nil {
			b.Fatal(err)
		}
	}

	// Random graph: each node dials benchGossipDials distinct others.
	rng := mrand.New(mrand.NewPCG(benchGossipSeed, benchGossipNodes))
	type edge struct{ a, c int }
	var edges []edge
	adj := make([][]int, len(nodes))
	for i := range nodes {
		for _, j := range rng.Perm(len(nodes) - 1)[:benchGossipDials] {
			if j >= i {
				j++
			}
			edges = append(edges, edge{i, j})
			adj[i], adj[j] = append(adj[i], j), append(adj[j], i)
		}
	}
	if !benchConnected(adj) {
		b.Fatal("the random graph is not connected; change benchGossipSeed")
	}
	dialErrs := make(chan error, len(edges))
	work := make(chan edge)
	var dialers sync.WaitGroup
	for w := 0; w < 8; w++ {
		dialers.Add(1)
		go func() {
			defer dialers.Done()
			for e := range work {
				dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
				to := nodes[e.c].h
				err := nodes[e.a].h.Connect(dctx, peer.AddrInfo{ID: to.ID(), Addrs: to.Addrs()})
				dcancel()
				if err != nil {
					dialErrs <- err
				}
			}
		}()
	}
	for _, e := range edges {
		work <- e
	}
	close(work)
	dialers.Wait()
	close(dialErrs)
	for err := range dialErrs {
		b.Fatalf("dial: %v", err)
	}

	// Wait until every node knows each connected peer's subscription; the
	// warm-up publishes below then let the heartbeat build the meshes.
	deadline := time.Now().Add(benchMeshTimeout)
	for !benchSubscriptionsKnown(nodes) {
		if time.Now().After(deadline) {
			b.Fatalf("subscriptions not propagated within %v", benchMeshTimeout)
		}
		time.Sleep(20 * time.Millisecond) // poll interval of a bounded condition wait
	}

	// Receivers: every node but the publisher (node 0) records the latency of
	// the publish in flight.
	const publisher = 0
	var current atomic.Pointer[benchInflight]
	var late atomic.Int64
	var recv sync.WaitGroup
	for i, n := range nodes {
		recv.Add(1)
		go func() {
			defer recv.Done()
			for {
				m, err := n.sub.Next(ctx)
				if err != nil {
					return
				}
				now := time.Now()
				if i == publisher {
					continue
				}
				cur := current.Load()
				if cur == nil || !bytes.Equal(cur.data, m.Data) {
					late.Add(1)
					continue
				}
				cur.mu.Lock()
				cur.lat = append(cur.lat, now.Sub(cur.sent))
				if len(cur.lat) == cur.want {
					close(cur.done)
				}
				cur.mu.Unlock()
			}
		}()
	}
	defer func() {
		cancel()
		recv.Wait()
	}()

	pub := nodes[publisher]
	pubKey := pub.h.Peerstore().PrivKey(pub.h.ID())
	ann := &pb.MinerAnnounce{Version: protocol.Version, Precisions: []uint32{uint32(proof.FP16), uint32(proof.FP32)},
		MaxOutputBytes: cfg.Miner.MaxOutputBytes}
	round := uint64(0)
	// publish sends one fresh challenge and returns the receivers' latencies
	// and how many receivers it did not reach within benchDeliveryTimeout.
	publish := func() ([]time.Duration, int) {
		round++
		// Each publish challenges the next peer: one validator-miner pair
		// gets a challenge per second, bursts of 4 (flood.go).
		target := nodes[1+int(round)%(len(nodes)-1)].h.ID()
		raw := benchChallenge(b, cfg, pub.view, pubKey, target, ann, round)
		cur := &benchInflight{data: raw, want: len(nodes) - 1, done: make(chan struct{})}
		cur.sent = time.Now()
		current.Store(cur)
		if err := pub.topic.Publish(ctx, raw); err != nil {
			b.Fatalf("publish: %v", err)
		}
		t := time.NewTimer(benchDeliveryTimeout)
		select {
		case <-cur.done:
		case <-t.C:
		}
		t.Stop()
		cur.mu.Lock()
		defer cur.mu.Unlock()
		return slices.Clone(cur.lat), cur.want - len(cur.lat)
	}

	complete := 0
	for w := 0; w < benchGossipWarmups && complete < 2; w++ {
		if _, missing := publish(); missing == 0 {
			complete++
		} else {
			complete = 0
		}
	}
	if complete < 2 {
		b.Logf("warning: warm-up publishes did not reach all %d receivers", len(nodes)-1)
	}
	runtime.GC()
	rssMB := benchRSS() / (1 << 20)
	goroutines := runtime.NumGoroutine()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)

	var all []time.Duration
	missing, sent := 0, 0
	lateBefore := late.Load()
	cpuBefore := benchCPUTime()
	var gcBefore, gcAfter runtime.MemStats
	runtime.ReadMemStats(&gcBefore)
	for b.Loop() {
		for range benchGossipPublishes {
			lat, miss := publish()
			all = append(all, lat...)
			missing += miss
			sent++
		}
	}
	cpuPerPublish := (benchCPUTime() - cpuBefore) / time.Duration(sent)
	runtime.ReadMemStats(&gcAfter)
	if len(all) == 0 {
		b.Fatal("no deliveries")
	}
	slices.Sort(all)
	b.ReportMetric(benchMS(benchPercentile(all, 0.50)), "p50-ms")
	b.ReportMetric(benchMS(benchPercentile(all, 0.99)), "p99-ms")
	b.ReportMetric(benchMS(all[len(all)-1]), "max-ms")
	b.ReportMetric(float64(len(all)), "samples")
	b.ReportMetric(benchMS(cpuPerPublish), "cpu-ms/publish")
	b.ReportMetric(float64(gcAfter.NumGC-gcBefore.NumGC)/float64(sent), "gc/publish")
	b.ReportMetric(100*float64(len(all))/float64(sent*(len(nodes)-1)), "delivered-%")
	b.ReportMetric(float64(rssMB), "rss-MB")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportMetric(float64(goroutines), "goroutines")
	if missing > 0 || late.Load() > lateBefore {
		b.Logf("%d deliveries missing after %v, %d late", missing, benchDeliveryTimeout, late.Load()-lateBefore)
	}
	if r := rejected.Load(); r > 0 {
		b.Errorf("the topic validator did not accept %d challenges", r)
	}
}

// BenchmarkChallengeCheck is the per-message CPU cost of the challenge
// topic validator on one node: view.topicCheck (protocol.Open: envelope and
// body decoding, the Ed25519 signature, parameter checks; then the view's
// rules). Every node of a gossip network pays it once per message.
func BenchmarkChallengeCheck(b *testing.B) {
	cfg := testConfig()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	ann := &pb.MinerAnnounce{Version: protocol.Version, Precisions: []uint32{uint32(proof.FP16)}, MaxOutputBytes: cfg.Miner.MaxOutputBytes}
	v := newView(cfg.Network.EpochLength.Duration, cfg.Network.TrustAnyValidator, nil)
	msgs := make([][]byte, 256)
	for i := range msgs {
		// One miner each: a validator-miner pair gets a challenge per
		// second, bursts of 4 (flood.go).
		mk, _, err := crypto.GenerateEd25519Key(rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		miner, _ := peer.IDFromPrivateKey(mk)
		msgs[i] = benchChallenge(b, cfg, v, key, miner, ann, uint64(i))
	}
	b.SetBytes(int64(len(msgs[0])))
	i := 0
	for b.Loop() {
		if i%len(msgs) == 0 {
			v = newView(cfg.Network.EpochLength.Duration, cfg.Network.TrustAnyValidator, nil)
		}
		if _, d := v.topicCheck(protocol.TopicChallenge, msgs[i%len(msgs)], time.Now()); d.result != pubsub.ValidationAccept {
			b.Fatalf("challenge not accepted: %s", d.reason)
		}
		i++
	}
}

// benchChallengeValidator is Node.gossipValidator for the challenge topic
// without a Node around it.
func benchChallengeValidator(v *view, rejected *atomic.Int64) pubsub.ValidatorEx {
	return func(_ context.Context, _ peer.ID, msg *pubsub.Message) pubsub.ValidationResult {
		now := time.Now()
		o, d := v.topicCheck(protocol.TopicChallenge, msg.Data, now)
		if d.result != pubsub.ValidationAccept {
			rejected.Add(1)
			return d.result
		}
		msg.ValidatorData = gossipVal{o, now}
		return pubsub.ValidationAccept
	}
}

// benchChallenge builds and seals a challenge the way validator.runRound
// does, with a fresh nonce and secret.
func benchChallenge(b *testing.B, cfg config.Config, v *view, key crypto.PrivKey, miner peer.ID, ann *pb.MinerAnnounce, round uint64) []byte {
	pl, err := plan.Challenge(cfg.Validator, miner, ann, 0, proof.FP16, 0, 0, 0, rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	sc := sample.Commit(pl.Secret)
	msg := &pb.Challenge{Version: protocol.Version, Epoch: v.epochAt(time.Now()), Round: round, Miner: []byte(miner),
		SecretCommitment: sc[:], Samples: uint32(pl.Samples), DeadlineMs: uint32(cfg.Validator.Deadline.Milliseconds()),
		Steps: uint32(pl.Steps), FirstRootMs: uint32(pl.FirstRootBy.Milliseconds())}
	for _, p := range pl.Params {
		enc, _ := p.MarshalBinary()
		msg.Params = append(msg.Params, enc)
	}
	raw, err := protocol.Seal(key, msg)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func benchSubscriptionsKnown(nodes []*benchGossipNode) bool {
	for _, n := range nodes {
		connected := len(n.h.Network().Peers())
		if connected == 0 || len(n.topic.ListPeers()) < connected {
			return false
		}
	}
	return true
}

func benchConnected(adj [][]int) bool {
	seen := make([]bool, len(adj))
	stack := []int{0}
	seen[0] = true
	count := 1
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, j := range adj[i] {
			if !seen[j] {
				seen[j] = true
				count++
				stack = append(stack, j)
			}
		}
	}
	return count == len(adj)
}

// benchRSS reads VmRSS from /proc/self/status, in bytes (0 if unavailable).
func benchRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// benchCPUTime is the process's user plus system CPU time so far.
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchPercentile is the nearest-rank percentile of sorted durations.
func benchPercentile(sorted []time.Duration, p float64) time.Duration {
	i := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func benchMS(d time.Duration) float64 { return float64(d) / 1e6 }

// Round overhead benchmark shape.
const (
	benchRounds       = 20 // verified rounds per benchmark iteration
	benchRoundTimeout = 3 * time.Minute
)

// BenchmarkRoundOverhead runs one validator and one CPU miner on loopback
// and reports, per verified round, the protocol's overhead: round time
// (challenge send to commitment receipt, CommitNanos, plus tile fetch and
// verification, VerifyNanos) minus the miner's own compute time (the
// compute_ms of its commitment).
func BenchmarkRoundOverhead(b *testing.B) {
	for _, c := range []struct {
		size, k uint32
		tile    int
	}{
		{128, 128, 4 << 10}, // testConfig
		{512, 512, 16 << 10},
		{1024, 1024, 16 << 10},
	} {
		b.Run(fmt.Sprintf("size=%d/k=%d/tile=%dKiB", c.size, c.k, c.tile>>10), func(b *testing.B) {
			cfg := testConfig()
			cfg.Validator.Size, cfg.Validator.K, cfg.Validator.TileBytes = c.size, c.k, c.tile
			cfg.Miner.ProofWindow = config.Duration{Duration: 5 * time.Second} // the validator fetches at once; free outputs early
			benchRoundOverhead(b, cfg)
		})
	}
}

type benchRoundStats struct {
	overhead, round, compute, commit, commitOver, verify []time.Duration
	samples                                              int
}

func benchRoundOverhead(b *testing.B, cfg config.Config) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	records := make(chan *store.RoundRecord, 1000)
	v := benchStartNode(b, ctx, &wg, RoleValidator, cfg, nil, records)
	m := benchStartNode(b, ctx, &wg, RoleMiner, cfg, cpu.Backend{}, records)
	if err := m.Connect(ctx, v.Addrs()...); err != nil {
		b.Fatal(err)
	}

	next := func(deadline <-chan time.Time) *store.RoundRecord {
		select {
		case r := <-records:
			if r.Verdict != store.VerdictVerified {
				b.Fatalf("round %d failed: %s", r.Round, r.Reason)
			}
			return r
		case <-deadline:
			b.Fatalf("no verified round within %v", benchRoundTimeout)
		}
		return nil
	}
	next(time.After(benchRoundTimeout)) // warm-up: connections, first stream

	var st benchRoundStats
	for b.Loop() {
		deadline := time.After(benchRoundTimeout)
		for range benchRounds {
			r := next(deadline)
			o, err := protocol.Open(r.Commitment, pb.MessageType_COMMITMENT)
			if err != nil {
				b.Fatal(err)
			}
			st.samples = len(r.Tiles)
			compute := time.Duration(o.Msg.(*pb.Commitment).ComputeMs) * time.Millisecond
			commitT, verifyT := time.Duration(r.CommitNanos), time.Duration(r.VerifyNanos)
			st.overhead = append(st.overhead, commitT+verifyT-compute)
			st.round = append(st.round, commitT+verifyT)
			st.compute = append(st.compute, compute)
			st.commit = append(st.commit, commitT)
			st.commitOver = append(st.commitOver, commitT-compute)
			st.verify = append(st.verify, verifyT)
		}
	}
	for _, s := range [][]time.Duration{st.overhead, st.round, st.compute, st.commit, st.commitOver, st.verify} {
		slices.Sort(s)
	}
	b.ReportMetric(benchMS(benchPercentile(st.overhead, 0.5)), "overhead-p50-ms")
	b.ReportMetric(benchMS(benchPercentile(st.overhead, 0.9)), "overhead-p90-ms")
	b.ReportMetric(benchMS(benchPercentile(st.round, 0.5)), "round-p50-ms")
	b.ReportMetric(benchMS(benchPercentile(st.compute, 0.5)), "compute-p50-ms")
	b.ReportMetric(benchMS(benchPercentile(st.commit, 0.5)), "commit-p50-ms")
	b.ReportMetric(benchMS(benchPercentile(st.commitOver, 0.5)), "commit-overhead-p50-ms")
	b.ReportMetric(benchMS(benchPercentile(st.verify, 0.5)), "verify-p50-ms")
	b.ReportMetric(float64(len(st.overhead)), "rounds")
	b.ReportMetric(float64(st.samples), "tiles")
}

// benchStartNode is testNet.start for benchmarks: a node with a fresh key
// and an in-memory store; a validator's records go to records.
func benchStartNode(b *testing.B, ctx context.Context, wg *sync.WaitGroup, role Role, cfg config.Config, be kernels.Backend, records chan<- *store.RoundRecord) *Node {
	b.Helper()
	key, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open("db", store.Options{FS: vfs.NewMem()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() }) // after the benchmark has stopped the nodes
	o := Options{Config: cfg, Role: role, Key: key, Logger: slog.New(slog.DiscardHandler), Backend: be, Store: st}
	if role == RoleValidator {
		o.OnRecord = func(r *store.RoundRecord) {
			select {
			case records <- r:
			default: // the benchmark has what it needs
			}
		}
	}
	n, err := New(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		n.Run(ctx)
	}()
	return n
}
