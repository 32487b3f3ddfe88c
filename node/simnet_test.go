package node

import (
	"context"
	"fmt"
	"github.com/pog-network/pog/proof/host/cpuwork"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	libp2pquic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/x/simlibp2p"
	"github.com/marcopolo/simnet"
	"github.com/pog-network/pog/kernels"
	"github.com/pog-network/pog/proof"
)

// simLatency is the one-way latency of every simulated link: a LAN.
const simLatency = 500 * time.Microsecond

// simLink is every simulated node's link: 1 Gbit/s each way.
var simLink = simnet.NodeBiDiLinkSettings{
	Downlink: simnet.LinkSettings{BitsPerSecond: 1000 * simlibp2p.OneMbps},
	Uplink:   simnet.LinkSettings{BitsPerSecond: 1000 * simlibp2p.OneMbps},
}

// newSimTestNet is newTestNet for a test running in a synctest bubble: its
// nodes are QUIC hosts on a simulated network, so epochs and deadlines pass
// on the bubble's clock and a loaded machine changes only the wall time.
func newSimTestNet(t *testing.T) *testNet { return newSimTestNetAt(t, simLatency) }

// newSimTestNetAt is newSimTestNet with every link's one-way latency.
func newSimTestNetAt(t *testing.T, latency time.Duration) *testNet {
	sim := &simnet.Simnet{LatencyFunc: simnet.StaticLatency(latency)}
	sim.Start()
	t.Cleanup(sim.Close) // cleanups run last-registered first: after the nodes stop
	tn := newTestNet(t)
	tn.sim = sim
	return tn
}

// onSim puts the node of o on tn's simulated network, if tn has one, with
// its device paced to simFLOPS.
func (tn *testNet) onSim(o *Options) {
	if tn.sim == nil {
		return
	}
	var listen string
	listen, o.Transport = tn.simEndpoint()
	o.Config.Node.Listen = []string{listen}
	if o.Backend != nil {
		o.Backend = pacedBackend{o.Backend}
	}
	o.Adversary.Miner.HostWindow = simHostWindow
}

// simStepNs is a simulated host's CPU chain step. A windowed CPU round's
// real work takes no virtual time, so its chains would run to the cap.
const simStepNs = 30

// simHostWindow runs the whole segments of a windowed CPU round that a
// host of simStepNs a step, a core per chain, runs before stop.
func simHostWindow(p *cpuwork.Params, stop time.Time) (uint64, time.Time) {
	now := time.Now()
	seg := max(time.Duration(float64(p.Segment)*simStepNs*p.Scale()), 1)
	n := min(p.PerChain(), uint64(max(0, stop.Sub(now))/seg))
	return n * p.Segment, now.Add(time.Duration(n) * seg)
}

// simEndpoint gives the next node of tn its listen address and the
// transport that puts it on tn's simulated network.
func (tn *testNet) simEndpoint() (listen string, transport []libp2p.Option) {
	ip := simnet.IntToPublicIPv4(tn.hosts)
	tn.hosts++
	return fmt.Sprintf("/ip4/%s/udp/8000/quic-v1", ip), []libp2p.Option{
		libp2p.Transport(libp2pquic.NewTransport),
		simlibp2p.QUICSimnet(tn.sim, simLink),
		// Identify's address discovery stalls a synctest bubble
		// (go-libp2p x/simlibp2p).
		libp2p.DisableIdentifyAddressDiscovery(),
	}
}

// simFLOPS is every simulated miner's speed. Real work takes no time in a
// bubble, so a device is as fast as pacing makes it: without pacing
// validators would measure it infinitely fast and size rounds without
// bound; at this slow speed they size them small and the test stays cheap.
const simFLOPS = 1e9

// pacedBackend is be with each step taking simFLOPS time on the bubble's
// clock.
type pacedBackend struct{ kernels.Backend }

func (b pacedBackend) Start(p proof.Params, o kernels.Options) (kernels.Job, error) {
	j, err := b.Backend.Start(p, o)
	if err != nil {
		return nil, err
	}
	return pacedJob{j, time.Duration(p.FLOPs() / simFLOPS * float64(time.Second))}, nil
}

// ComputeTile keeps be's own tile recomputation (a cheating backend's).
func (b pacedBackend) ComputeTile(ctx context.Context, p proof.Params, i uint64, dst []byte) error {
	return kernels.ComputeTile(ctx, b.Backend, p, i, dst)
}

type pacedJob struct {
	kernels.Job
	takes time.Duration
}

func (j pacedJob) Multiply(ctx context.Context) error {
	if err := j.Job.Multiply(ctx); err != nil {
		return err
	}
	select {
	case <-time.After(j.takes):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
