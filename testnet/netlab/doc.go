// Package netlab holds the networks a testnet runs its nodes on, apart
// from the nodes themselves: the simulated network of a run in virtual time
// (Sim) and the faults injected into it (Faults), the delay proxies that
// add latency on loopback (DelayProxy, DelayedDialer), and Linux network
// namespaces joined by a bridge (Namespaces). Package testnet decides
// which node sits where; this package only carries their packets.
package netlab
