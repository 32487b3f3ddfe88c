package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/api"
	"github.com/pog-network/pog/node/config"
	"github.com/pog-network/pog/node/metrics"
	"github.com/pog-network/pog/store"
)

// APIAddrFile, in a node's home, holds the running node's API address;
// the offline commands ask that API instead of opening the locked store.
const APIAddrFile = "api.addr"

// apiToken reads the configured token file, relative to the home.
func apiToken(home string, c config.NodeConfig) (string, error) {
	if c.APITokenFile == "" {
		return "", nil
	}
	path := c.APITokenFile
	if !filepath.IsAbs(path) {
		path = filepath.Join(home, path)
	}
	return api.ReadToken(path)
}

// checkAPIConfig reads the token and checks the address before the node
// starts, so a refused setting stops it before it joins the network.
func checkAPIConfig(home string, c config.NodeConfig) (token string, err error) {
	if token, err = apiToken(home, c); err != nil {
		return "", err
	}
	return token, api.CheckAddr(c.API, token != "")
}

// startAPI serves the API on the configured address and records the
// address it bound in the home. stop shuts it down and removes the file.
func startAPI(home, token string, cfg config.Config, n *node.Node, st *store.Store, stakes map[string]float64, m *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	storeDir := filepath.Join(home, config.StoreDir)
	m.AddGauges(metrics.Gauges{
		Peers:      func() float64 { return float64(len(n.Host().Network().Peers())) },
		StoreBytes: func() float64 { return float64(dirSize(storeDir)) },
		Queue:      func() float64 { return float64(n.QueueLength()) },
		Held:       func() float64 { return float64(n.HeldRounds()) },
	})
	ln, err := net.Listen("tcp", cfg.Node.API)
	if err != nil {
		return nil, fmt.Errorf("api: %w", err)
	}
	addrFile := filepath.Join(home, APIAddrFile)
	if err := os.WriteFile(addrFile, []byte(ln.Addr().String()+"\n"), 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("api: %w", err)
	}
	srv := api.NewServer(api.New(api.Options{Live: n, Store: st, Stakes: stakes, Metrics: m, Token: token, Version: readVersion().label()}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("api stopped", "err", err)
		}
	}()
	log.Info("api listening", "addr", "http://"+ln.Addr().String()+"/", "token", token != "")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
		os.Remove(addrFile)
	}, nil
}

// dirSize sums the sizes of the files under dir (0 on errors: it is a
// gauge, and pebble may remove files while it walks).
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
