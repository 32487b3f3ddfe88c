package node

import (
	"math"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Challenge rate limits (SPEC §15). A validator's rounds with one miner run
// one after another, each lasting at least a second and followed by a random
// pause set by its duty cycle, so an honest validator never sends one miner
// more than one challenge a second on average; the burst absorbs rounds that
// end at once (a miner that resets its streams).
const (
	challengeBurst = 4
	challengeEvery = time.Second
	// strikeScore is the application peer score of one challenge over the
	// rate; strikes halve every strikeHalfLife, so an honest validator's
	// rare excess fades while a flood sinks the sender below the gossip
	// threshold (−500) after about ten.
	strikeScore    = -50
	strikeHalfLife = time.Minute
)

// Announces from keys this node does not know are limited per connection
// (the peer that delivered them), before their signature is checked: a
// joining node learns hundreds of miners through a few connections at
// once, a connection minting fresh identities gets four a second.
const (
	newKeyBurst = 256
	newKeyEvery = time.Second / 4
)

// bucket is a token bucket (of a validator–miner pair, or of a connection
// for announces from new keys).
type bucket struct {
	tokens float64
	at     time.Time
}

// strike is a decaying count of a peer's excess challenges.
type strike struct {
	n  float64
	at time.Time
}

func decayed(n float64, since time.Duration) float64 {
	return n * math.Exp2(-since.Seconds()/strikeHalfLife.Seconds())
}

// take takes a token from b at now, refilled one per every up to burst.
func (b *bucket) take(now time.Time, burst float64, every time.Duration) bool {
	if dt := now.Sub(b.at); dt > 0 {
		b.tokens = min(burst, b.tokens+dt.Seconds()/every.Seconds())
		b.at = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// allowAnnounce reports whether an announce by author, delivered by conn,
// may be checked: always for a known author, else if conn's bucket for new
// keys has a token.
func (v *view) allowAnnounce(author, conn peer.ID, now time.Time) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, known := v.announceSeq[author]; known {
		return true
	}
	b := v.newKeys[conn]
	if b == nil {
		if len(v.newKeys) >= maxAnnouncers {
			for p, x := range v.newKeys {
				if x.tokens+now.Sub(x.at).Seconds()/newKeyEvery.Seconds() >= newKeyBurst {
					delete(v.newKeys, p)
				}
			}
		}
		b = &bucket{tokens: newKeyBurst, at: now}
		v.newKeys[conn] = b
	}
	return b.take(now, newKeyBurst, newKeyEvery)
}

// allowChallenge takes a token from k's bucket at now, or records a strike
// against its validator and reports false. v.mu must be held.
func (v *view) allowChallenge(k pair, now time.Time) bool {
	b := v.buckets[k]
	if b == nil {
		if len(v.buckets) >= 2*maxOpenChallenges {
			v.pruneBuckets(now)
		}
		b = &bucket{tokens: challengeBurst, at: now}
		v.buckets[k] = b
	}
	if b.take(now, challengeBurst, challengeEvery) {
		return true
	}
	s := v.strikes[k.validator]
	if s == nil {
		s = &strike{at: now}
		v.strikes[k.validator] = s
	}
	s.n, s.at = decayed(s.n, now.Sub(s.at))+1, now
	return false
}

// pruneBuckets forgets full buckets (idle long enough to have refilled)
// and strikes decayed below a hundredth. v.mu must be held.
func (v *view) pruneBuckets(now time.Time) {
	for k, b := range v.buckets {
		if b.tokens+now.Sub(b.at).Seconds()/challengeEvery.Seconds() >= challengeBurst {
			delete(v.buckets, k)
		}
	}
	for p, s := range v.strikes {
		if decayed(s.n, now.Sub(s.at)) < 0.01 {
			delete(v.strikes, p)
		}
	}
}

// appScore is p's application-specific gossip score: its decayed strikes
// times strikeScore.
func (v *view) appScore(p peer.ID, now time.Time) float64 {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.strikes[p]
	if s == nil {
		return 0
	}
	return strikeScore * decayed(s.n, now.Sub(s.at))
}
