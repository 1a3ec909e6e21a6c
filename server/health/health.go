package health

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Paths are the probes' paths, which authentication exempts.
var Paths = []string{"/livez", "/readyz"}

// Probes answers /livez and /readyz.
type Probes struct {
	ready    atomic.Bool
	stopping atomic.Bool
	// check, when set, is asked on each /readyz (e.g. whether Kafka
	// answers).
	check atomic.Pointer[func(context.Context) error]
}

// SetReady marks the server ready, with check asked on each /readyz from
// then on (nil for none).
func (p *Probes) SetReady(check func(context.Context) error) {
	if check != nil {
		p.check.Store(&check)
	}
	p.ready.Store(true)
}

// SetStopping marks the server shutting down: /readyz fails, so that load
// balancers stop sending it requests.
func (p *Probes) SetStopping() { p.stopping.Store(true) }

// Register adds the probes to mux.
func (p *Probes) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", p.readyz)
}

func (p *Probes) readyz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	switch {
	case p.stopping.Load():
		http.Error(w, "not ready: shutting down", http.StatusServiceUnavailable)
		return
	case !p.ready.Load():
		http.Error(w, "not ready: starting (replaying the catalog, starting queries)", http.StatusServiceUnavailable)
		return
	}
	if c := p.check.Load(); c != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		if err := (*c)(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
	}
	_, _ = w.Write([]byte("ok\n"))
}
