// Package adversary holds how the testnet's adversaries cheat, each in one
// place: the simulated compute device every miner runs on and the modes
// that bend it (lazy, precision, replay, sybil, slow; Backend), the device
// time identities share (timeshare; Device), host proofs played badly
// (cpu-on-gpu, ram-on-disk, storage-regen; HostTime, GPUHostProve,
// SlowRegen), announces that inflate (memory-inflate, gpu-overannounce;
// Announce), a CPU job beside an honest miner (loaded; Load) and bare
// gossip peers (spammer, forger; Attacker). Package testnet decides who
// plays which, runs them and judges what each gained.
package adversary
