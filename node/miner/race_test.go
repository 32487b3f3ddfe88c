//go:build race

package miner

// raceEnabled: the race detector keeps shadow memory for every allocation,
// so peak RSS grows with the work done and says nothing about the miner.
const raceEnabled = true
