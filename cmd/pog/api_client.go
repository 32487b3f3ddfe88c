package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pog-network/pog/node/config"
)

// apiClient asks a running node's API.
type apiClient struct {
	base  string // http://host:port
	token string
	http  *http.Client
}

func newAPIClient(addr, token string) *apiClient {
	if !strings.Contains(addr, "://") {
		addr = "http://" + addr
	}
	return &apiClient{base: strings.TrimRight(addr, "/"), token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// runningAPI returns a client for the node running on home, if its API
// address file exists.
func runningAPI(home string) (*apiClient, error) {
	b, err := os.ReadFile(filepath.Join(home, APIAddrFile))
	if err != nil {
		return nil, err
	}
	var token string
	if cfg, err := config.LoadConfig(home); err == nil {
		if token, err = apiToken(home, cfg.Node); err != nil {
			return nil, err
		}
	}
	return newAPIClient(strings.TrimSpace(string(b)), token), nil
}

// maxAPIResponse bounds what a client reads from a node.
const maxAPIResponse = 64 << 20

// get decodes path's JSON answer into v.
func (c *apiClient) get(path string, v any) error {
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponse))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %s", path, e.Error)
		}
		return fmt.Errorf("%s: HTTP %s", path, resp.Status)
	}
	return json.Unmarshal(body, v)
}

// fromRunningNode is the offline commands' first step: if a node runs on
// home, fetch path from its API into v and report true; a stale address
// file (the node died) falls through to the store.
func fromRunningNode(stderr io.Writer, name, home, path string, v any) (ok bool, code int) {
	if home == "" {
		return false, 0
	}
	c, err := runningAPI(home)
	if err != nil {
		return false, 0
	}
	if err := c.get(path, v); err != nil {
		if isDialError(err) {
			fmt.Fprintf(stderr, "pog %s: notice: %s names %s, which does not answer; reading the store\n", name, APIAddrFile, c.base)
			return false, 0
		}
		fmt.Fprintf(stderr, "pog %s: %v\n", name, err)
		return true, 1
	}
	return true, 0
}

// isDialError: nothing listens at the address (the client wraps the
// *net.OpError in a *url.Error).
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// homePeer is the peer ID of home's key, or "" if it has none.
func homePeer(home string) string {
	key, err := config.LoadKey(home)
	if err != nil {
		return ""
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return ""
	}
	return id.String()
}
