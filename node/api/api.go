// Package api is a node's local HTTP API: versioned JSON under /api/v1
// (described by the embedded openapi.yaml), Prometheus metrics at /metrics
// and an embedded dashboard at /. It reads the node's store and a Live
// snapshot, so tests drive it with a fixture store and no libp2p.
package api

import (
	"crypto/subtle"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/pog-network/pog/node"
	"github.com/pog-network/pog/node/metrics"
	"github.com/pog-network/pog/store"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Live is what the API needs from a running node; *node.Node implements it.
type Live interface {
	Snapshot() node.Snapshot
}

// Options configure New.
type Options struct {
	Live    Live
	Store   *store.Store
	Stakes  map[string]float64 // genesis stakes (nil: equal)
	Metrics *metrics.Metrics   // nil: no /metrics
	Token   string             // if set, every request needs "Authorization: Bearer <token>"
	Version string
}

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI is the API's description.
func OpenAPI() []byte { return openAPI }

// New returns the API's handler.
func New(o Options) http.Handler {
	s := &server{o: o}
	mux := http.NewServeMux()
	for path, h := range s.routes() {
		mux.HandleFunc("GET "+path, h)
	}
	mux.HandleFunc("GET /api/v1/openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(openAPI)
	})
	if o.Metrics != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(o.Metrics.Registry, promhttp.HandlerOpts{}))
	}
	mux.Handle("GET /", dashboard())
	return s.auth(mux)
}

// Paths lists the JSON endpoints' paths, for the OpenAPI check.
func Paths() []string {
	var out []string
	for p := range (&server{}).routes() {
		out = append(out, p)
	}
	return out
}

func (s *server) routes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"/api/v1/status":            s.status,
		"/api/v1/rounds":            s.rounds,
		"/api/v1/epochs":            s.epochs,
		"/api/v1/weights":           s.weights,
		"/api/v1/weights/history":   s.weightsHistory,
		"/api/v1/pricing":           s.pricing,
		"/api/v1/scores":            s.scores,
		"/api/v1/miners/{id}/score": s.minerScore,
		"/api/v1/hw":                s.hw,
		"/api/v1/own/rounds":        s.ownRounds,
	}
}

type server struct{ o Options }

// auth requires the bearer token when one is configured. The dashboard's
// static files are public (they hold no data); its requests carry the
// token it reads from the page's #token= fragment.
func (s *server) auth(next http.Handler) http.Handler {
	if s.o.Token == "" {
		return next
	}
	want := []byte("Bearer " + s.o.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		public := !strings.HasPrefix(r.URL.Path, "/api/") && r.URL.Path != "/metrics"
		if !public && subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="pog"`)
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CheckAddr refuses an address that is not host:port, and a non-loopback
// one unless a token protects it.
func CheckAddr(addr string, haveToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("api address %q: want host:port, e.g. 127.0.0.1:9090: %v", addr, err)
	}
	if haveToken || host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("api address %q is not loopback: set node.api_token_file to expose the API", addr)
	}
	return nil
}

// MinTokenLen is the shortest bearer token accepted.
const MinTokenLen = 16

// ReadToken reads a bearer token file (surrounding space is ignored).
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("api token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if len(t) < MinTokenLen || strings.ContainsAny(t, " \t\r\n") {
		return "", fmt.Errorf("api token %s: want one word of at least %d characters", path, MinTokenLen)
	}
	return t, nil
}

// Server timeouts: the API answers small requests; slow clients must not
// hold connections.
const (
	readTimeout  = 10 * time.Second
	writeTimeout = 60 * time.Second
)

// NewServer wraps h in an http.Server with bounded timeouts and headers.
func NewServer(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: readTimeout, ReadTimeout: readTimeout,
		WriteTimeout: writeTimeout, IdleTimeout: time.Minute, MaxHeaderBytes: 16 << 10}
}
