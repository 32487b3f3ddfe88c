package main

import (
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/audit"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/epoch"
	"github.com/pog-network/pog/protocol"
	"github.com/pog-network/pog/protocol/consensus"
	"github.com/pog-network/pog/protocol/pb"
	"github.com/pog-network/pog/protocol/scoring"
	"github.com/pog-network/pog/store"
)

func init() {
	commands["epochs"] = command{"list the epoch records this node holds", runEpochs}
	commands["weights"] = command{"show an epoch's consensus weights and each validator's", runWeights}
	commands["pricing"] = command{"show each miner's rental price per GPU-hour from the latest epoch", runPricing}
	commands["audit"] = command{"re-check every stored record, recompute weights and consensus", runAudit}
}

// openHome opens a node home's store and genesis stakes for reading.
func openHome(stderr io.Writer, name, home string) (*store.Store, map[string]float64, int) {
	if home == "" {
		fmt.Fprintf(stderr, "pog %s: --home is required\n", name)
		return nil, nil, 2
	}
	cfg, err := config.LoadConfig(home)
	if err != nil {
		fmt.Fprintf(stderr, "pog %s: %v\n", name, err)
		return nil, nil, exitCode(err)
	}
	stakes, err := epoch.StakeSet(home, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "pog %s: %v\n", name, err)
		return nil, nil, exitCode(err)
	}
	dir := filepath.Join(home, config.StoreDir)
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(stderr, "pog %s: no store at %s (has a node run with this home?)\n", name, dir)
		return nil, nil, 1
	}
	st, err := openStoreReadOnly(dir)
	if err != nil {
		fmt.Fprintf(stderr, "pog %s: %v\n", name, err)
		return nil, nil, 1
	}
	return st, stakes, 0
}

type epochRow struct {
	Epoch     uint64 `json:"epoch"`
	Validator string `json:"validator"`
	Miners    int    `json:"miners"`
	ID        string `json:"id"`
	Prev      string `json:"prev"`
	Rounds    string `json:"rounds_root"`
}

func runEpochs(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog epochs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	jsonOut := fs.Bool("json", false, "print a JSON array")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	var rows []epochRow
	if ok, code := fromRunningNode(stderr, "epochs", *home, "/api/v1/epochs?limit=5000", &rows); ok {
		if code == 0 {
			printEpochs(stdout, rows, *jsonOut)
		}
		return code
	}
	st, _, code := openHome(stderr, "epochs", *home)
	if st == nil {
		return code
	}
	defer st.Close()
	rows = []epochRow{}
	for ent, err := range st.EpochRecords(0, ^uint64(0)) {
		if err != nil {
			fmt.Fprintf(stderr, "pog epochs: %v\n", err)
			return 1
		}
		o, err := protocol.Open(ent.Envelope, pb.MessageType_EPOCH_RECORD)
		if err != nil {
			fmt.Fprintf(stderr, "pog epochs: record %d of %s: %v (run pog audit)\n", ent.Epoch, peer.ID(ent.Validator), err)
			return 1
		}
		rec, id := o.Msg.(*pb.EpochRecord), protocol.ID(o.Body)
		rows = append(rows, epochRow{Epoch: ent.Epoch, Validator: o.Author.String(), Miners: len(rec.Weights),
			ID: hex.EncodeToString(id[:]), Prev: hex.EncodeToString(rec.PrevRecordHash), Rounds: hex.EncodeToString(rec.RoundsRoot)})
	}
	printEpochs(stdout, rows, *jsonOut)
	return 0
}

func printEpochs(stdout io.Writer, rows []epochRow, jsonOut bool) {
	printTable(stdout, jsonOut, rows, "EPOCH\tVALIDATOR\tMINERS\tRECORD ID", func(r epochRow) string {
		return fmt.Sprintf("%d\t%s\t%d\t%s…", r.Epoch, r.Validator, r.Miners, r.ID[:16])
	})
}

type weightRow struct {
	Miner      string             `json:"miner"`
	Consensus  float64            `json:"consensus"`
	Incentive  float64            `json:"incentive"`
	Validators map[string]float64 `json:"validators"`
}

type weightsOut struct {
	Epoch     uint64             `json:"epoch"`
	Hash      string             `json:"consensus_hash"`
	Miners    []weightRow        `json:"miners"`
	Trust     map[string]float64 `json:"validator_trust"`
	Dividends map[string]float64 `json:"validator_dividends"`
	Scores    []epoch.MinerScore `json:"scores,omitempty"` // --miner: its score's breakdown
}

func runWeights(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog weights", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	ep := fs.Int64("epoch", -1, "the epoch (required unless a node runs on this home: then the latest)")
	jsonOut := fs.Bool("json", false, "print JSON")
	miner := fs.String("miner", "", "only this miner (peer ID), with its score's breakdown from this home's round evidence, as pog explain prints it")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if code := checkMiner(stderr, "weights", *miner); code != 0 {
		return code
	}
	var out weightsOut
	path := "/api/v1/weights"
	if *ep >= 0 {
		path += fmt.Sprintf("?epoch=%d", *ep)
	}
	if ok, code := fromRunningNode(stderr, "weights", *home, path, &out); ok {
		if code == 0 {
			code = showWeights(stdout, stderr, out, *home, nil, *miner, *jsonOut)
		}
		return code
	}
	if *ep < 0 {
		fmt.Fprintln(stderr, "pog weights: --epoch is required")
		return 2
	}
	st, stakes, code := openHome(stderr, "weights", *home)
	if st == nil {
		return code
	}
	defer st.Close()
	e := uint64(*ep)
	res, err := epoch.Consensus(st, e, stakes, consensus.DefaultParams())
	if err != nil {
		fmt.Fprintf(stderr, "pog weights: %v\n", err)
		return 1
	}
	h := res.Hash()
	out = weightsOut{Epoch: e, Hash: hex.EncodeToString(h[:]), Miners: []weightRow{}, Trust: map[string]float64{}, Dividends: map[string]float64{}}
	per, err := epoch.RecordWeights(st, e)
	if err != nil {
		fmt.Fprintf(stderr, "pog weights: %v\n", err)
		return 1
	}
	for j, m := range res.Miners {
		out.Miners = append(out.Miners, weightRow{Miner: m, Consensus: res.Consensus[j], Incentive: res.Incentive[j], Validators: per[m]})
	}
	for i, v := range res.Validators {
		out.Trust[v], out.Dividends[v] = res.Trust[i], res.Dividends[i]
	}
	return showWeights(stdout, stderr, out, *home, st, *miner, *jsonOut)
}

// printWeights marks self, the home's own peer, in the table.
func printWeights(stdout io.Writer, out weightsOut, jsonOut bool, self string) {
	if jsonOut {
		writeJSON(stdout, out)
		return
	}
	fmt.Fprintf(stdout, "epoch %d  consensus %s…\n", out.Epoch, out.Hash[:16])
	writeTable(stdout, out.Miners, "MINER\tCONSENSUS\tINCENTIVE\tVALIDATORS", func(r weightRow) string {
		mark := ""
		if r.Miner == self {
			mark = "  (this node)"
		}
		return fmt.Sprintf("%s%s\t%.6f\t%.6f\t%d", r.Miner, mark, r.Consensus, r.Incentive, len(r.Validators))
	})
	for _, v := range slices.Sorted(maps.Keys(out.Trust)) {
		fmt.Fprintf(stdout, "validator %s  trust %.4f  dividends %.4f\n", v, out.Trust[v], out.Dividends[v])
	}
}

type priceRow struct {
	Miner       string   `json:"miner"`
	Epoch       uint64   `json:"epoch"`
	GPUs        int      `json:"gpus"`
	FP16TFLOPS  float64  `json:"fp16_sustained_tflops"`
	PricePerGPU float64  `json:"usd_per_gpu_hour"`
	Total       float64  `json:"score"`
	Flags       []string `json:"flags,omitempty"` // claims the measurements contradict
}

func runPricing(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog pricing", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	jsonOut := fs.Bool("json", false, "print JSON")
	utilisation := fs.Float64("utilisation", 0.7, "network utilisation driving the demand factor, in [0, 1]")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if !(*utilisation >= 0 && *utilisation <= 1) {
		fmt.Fprintln(stderr, "pog pricing: --utilisation must be in [0, 1]")
		return 2
	}
	var out []priceRow
	if ok, code := fromRunningNode(stderr, "pricing", *home, fmt.Sprintf("/api/v1/pricing?utilisation=%v", *utilisation), &out); ok {
		if code == 0 {
			printPricing(stdout, out, *jsonOut)
		}
		return code
	}
	st, _, code := openHome(stderr, "pricing", *home)
	if st == nil {
		return code
	}
	defer st.Close()
	rows, err := epoch.Pricing(st, scoring.DefaultConfig(), *utilisation)
	if err != nil {
		fmt.Fprintf(stderr, "pog pricing: %v\n", err)
		return 1
	}
	out = []priceRow{}
	for _, r := range rows {
		out = append(out, priceRow{Miner: r.Miner, Epoch: r.Epoch, GPUs: r.GPUs, FP16TFLOPS: r.Score.FP16Sustained, PricePerGPU: r.Price, Total: r.Score.Total, Flags: r.Score.Flags})
	}
	printPricing(stdout, out, *jsonOut)
	return 0
}

func printPricing(stdout io.Writer, out []priceRow, jsonOut bool) {
	printTable(stdout, jsonOut, out, "MINER\tEPOCH\tGPUS\tFP16 TFLOPS\tUSD/GPU-HOUR\tSCORE", func(r priceRow) string {
		return fmt.Sprintf("%s\t%d\t%d\t%.4f\t%.4f\t%.6f", r.Miner, r.Epoch, r.GPUs, r.FP16TFLOPS, r.PricePerGPU, r.Total)
	})
}

func runAudit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pog audit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	home := homeFlag(fs)
	epoch := fs.Int64("epoch", -1, "recompute only this epoch (the record chain is still checked from the start)")
	since := fs.Int64("since", -1, "incremental: re-verify only epochs from this one on (earlier ones were audited before; chains and consensus still run from the start)")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	peerAddr := fs.String("peer", "", "audit a running node instead of a home: dial this multiaddr (ending in /p2p/ID), fetch its records and round evidence into memory")
	validator := fs.String("validator", "", "with --peer: the validator whose weights to recompute (default: the peer), its evidence asked of it")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	sinceSet, homeSet := false, false
	fs.Visit(func(f *flag.Flag) { sinceSet, homeSet = sinceSet || f.Name == "since", homeSet || f.Name == "home" })
	if *peerAddr != "" {
		if sinceSet {
			fmt.Fprintln(stderr, "pog audit: --since needs a home; --peer audits from scratch")
			return 2
		}
		if !homeSet {
			*home = ""
		}
		return runPeerAudit(*peerAddr, *validator, *home, *epoch, *jsonOut, stdout, stderr)
	}
	if *validator != "" {
		fmt.Fprintln(stderr, "pog audit: --validator needs --peer")
		return 2
	}
	if sinceSet && *since < 0 {
		fmt.Fprintln(stderr, "pog audit: --since must be an epoch (0 or more)")
		return 2
	}
	st, stakes, code := openHome(stderr, "audit", *home)
	if st == nil {
		return code
	}
	defer st.Close()
	opts := audit.Options{Scoring: scoring.DefaultConfig(), Consensus: consensus.DefaultParams(), Stakes: stakes}
	if key, err := config.LoadKey(*home); err == nil {
		id, _ := peer.IDFromPrivateKey(key)
		opts.Local = []peer.ID{id}
	}
	if *epoch >= 0 {
		e := uint64(*epoch)
		opts.Epoch = &e
	}
	if *since >= 0 {
		e := uint64(*since)
		opts.Since = &e
	}
	if opts.Epoch != nil && !holdsEpoch(st, *opts.Epoch) {
		fmt.Fprintf(stderr, "pog audit: epoch %d: this store holds no records of it, so there is nothing to audit\n", *opts.Epoch)
		return 1
	}
	rep, err := audit.Audit(st, opts)
	if err != nil {
		fmt.Fprintf(stderr, "pog audit: %v\n", err)
		return 1
	}
	if *jsonOut {
		writeJSON(stdout, rep)
	} else {
		fmt.Fprintf(stdout, "epoch records  %d (%d recomputed from evidence, %d with pruned evidence)\nround records  %d (%d proofs re-verified)\nequivocations  %d proofs checked\nconsensus      %d epochs recomputed\n",
			rep.EpochRecords, rep.Recomputed, rep.Pruned, rep.Rounds, rep.ProofsVerified, rep.Equivocations, len(rep.ConsensusHashes))
	}
	if len(rep.Problems) > 0 {
		fmt.Fprintf(stderr, "pog audit: FAILED: %s\n", rep.Problems[0])
		for _, p := range rep.Problems[1:] {
			fmt.Fprintf(stderr, "  also: %s\n", p)
		}
		return 1
	}
	if !*jsonOut {
		fmt.Fprintln(stdout, "audit          OK")
	}
	return 0
}

// openStoreReadOnly opens a home's store for the read-only commands: they
// never write, create or delete a file in it.
func openStoreReadOnly(dir string) (*store.Store, error) {
	st, err := store.Open(dir, store.Options{FS: storeFS, ReadOnly: true})
	if errors.Is(err, store.ErrLocked) {
		err = fmt.Errorf("%w: stop the node using this home first", err)
	}
	return st, err
}

// holdsEpoch reports whether st holds an epoch record or a round record of
// epoch e (a read error counts as holding: the audit reports it).
func holdsEpoch(st *store.Store, e uint64) bool {
	for range st.EpochRecords(e, e) {
		return true
	}
	for range st.Rounds(e, e) {
		return true
	}
	return false
}
