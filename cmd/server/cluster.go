package main

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/server"
)

// clusterConfig returns the engine's cluster settings (--cluster): the
// advertised address (the gRPC listen address unless given), a stable
// server id kept in the data directory for static group membership, and
// the forwarder of pull queries.
func clusterConfig(cfg config, listen string, sec *security) (*engine.ClusterConfig, *server.Forwarder, error) {
	addr := cfg.advertised
	if addr == "" {
		addr = listen
		if host, _, err := net.SplitHostPort(listen); err == nil {
			if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
				return nil, nil, fmt.Errorf("--cluster: the gRPC API listens on %s, which the other servers cannot dial; give --advertised-address host:port", listen)
			}
		}
	}
	id, err := serverID(cfg.dataDir)
	if err != nil {
		return nil, nil, err
	}
	creds := insecure.NewCredentials()
	if sec.tls != nil {
		// The servers of a cluster present certificates the system (or
		// SSL_CERT_FILE) trusts; with mutual TLS this server's own
		// certificate is its client certificate.
		creds = credentials.NewTLS(&tls.Config{Certificates: sec.tls.Certificates, MinVersion: tls.VersionTLS12})
	}
	fwd := server.NewForwarder(grpc.WithTransportCredentials(creds))
	return &engine.ClusterConfig{
		Address:        addr,
		InstanceID:     cfg.serviceID + "-" + id,
		SessionTimeout: cfg.sessionTimeout,
		Forward:        fwd.PullQuery,
	}, fwd, nil
}

// serverID returns the id kept in dataDir/server-id, creating it on the
// first start: a restarted server keeps its group membership.
func serverID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "server-id")
	b, err := os.ReadFile(path)
	if err == nil {
		if id := strings.TrimSpace(string(b)); id != "" {
			return id, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("reading the server id: %w", err)
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	id := hex.EncodeToString(r[:])
	if err := os.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing the server id: %w", err)
	}
	return id, nil
}
