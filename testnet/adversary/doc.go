// Package adversary holds how the testnet's adversaries cheat, each in one
// place: the simulated compute device every miner runs on and the modes
// that bend it (lazy, precision, replay, sybil, slow; Backend), the device
// time identities share (timeshare; Device), host proofs played badly
// (cpu-on-gpu, ram-on-disk, storage-regen, sparse-plot; HostTime,
// GPUHostProve, DiskRAM, SlowRegen, SparsePlotNs), rounds skipped (intermittent; Intermittent), a
// miner present only in its owned slots (absent; Absence), announces that
// inflate (memory-inflate, gpu-overannounce; Announce), a CPU job beside
// an honest miner (loaded; Load), bare gossip peers (spammer, forger;
// Attacker) and validators that sign what their evidence does not support
// or two records an epoch (dishonest-validator, weighing only its
// accomplice, and equivocator; SkewWeights, AccompliceLimit,
// Equivocate), with the checks that their victims are unharmed
// (EquivocatorIgnored, SquatterCheck). It also holds what an adversary may gain: each one's gain
// over honest work on its real hardware, and the limits it is judged
// against (Profitability, PaidCheck). Package testnet decides who plays
// which, runs them and checks the rest.
package adversary
