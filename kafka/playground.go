package kafka

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// PlaygroundConfig configures StartPlayground.
type PlaygroundConfig struct {
	// Addr is the TCP address to listen on; "127.0.0.1:9092" when empty.
	// Use "127.0.0.1:0" for a free port and read it back with Addr.
	Addr string
	// DataDir is where topics, records and committed offsets persist; a
	// restart on the same DataDir keeps them. Empty keeps everything in
	// memory.
	DataDir string
	// DefaultPartitions is the partition count of topics created without
	// one (auto-created, or CreateTopic with Partitions <= 0); 1 when zero.
	DefaultPartitions int
	// SyncWrites fsyncs every produced batch. Off by default: the log is
	// then flushed on segment roll and on Close, like Kafka's default, and
	// a crash can lose the latest batches.
	SyncWrites bool
	// Logger receives the broker's warnings and errors; nothing is logged
	// when nil.
	Logger *slog.Logger
}

// Playground is an in-process, single-node Kafka-protocol broker for
// development and tests (franz-go's kfake). It is not replicated and not
// meant for production data. Any Kafka client can connect to Addr.
type Playground struct {
	cluster   *kfake.Cluster
	addr      string
	closeOnce sync.Once
}

// StartPlayground starts a Playground broker and returns once it accepts
// connections. ctx bounds only the start; the broker runs until Close.
func StartPlayground(ctx context.Context, cfg PlaygroundConfig) (*Playground, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kafka: start playground: %w", err)
	}
	addr := cfg.Addr
	if addr == "" {
		addr = "127.0.0.1:9092"
	}
	parts := cfg.DefaultPartitions
	if parts <= 0 {
		parts = 1
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.ClusterID("sluice-playground"),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(parts),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			var lc net.ListenConfig
			return lc.Listen(ctx, network, addr)
		}),
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	if cfg.SyncWrites {
		opts = append(opts, kfake.SyncWrites())
	}
	if cfg.Logger != nil {
		opts = append(opts, kfake.WithLogger(kfakeLogger{cfg.Logger}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: start playground on %s: %w", addr, err)
	}
	addrs := c.ListenAddrs()
	if len(addrs) != 1 {
		c.Close()
		return nil, fmt.Errorf("kafka: start playground: broker listens on %d addresses, want 1", len(addrs))
	}
	return &Playground{cluster: c, addr: addrs[0]}, nil
}

// Addr returns the bootstrap address the broker is bound to, as
// "host:port".
func (p *Playground) Addr() string { return p.addr }

// Close stops the broker and, with a DataDir, writes its state to disk.
// Calling Close again does nothing.
func (p *Playground) Close() {
	p.closeOnce.Do(p.cluster.Close)
}

// kfakeLogger adapts a *slog.Logger to kfake.Logger, passing warnings and
// errors only.
type kfakeLogger struct{ l *slog.Logger }

func (k kfakeLogger) Logf(level kfake.LogLevel, format string, args ...any) {
	var lvl slog.Level
	switch level {
	case kfake.LogLevelError:
		lvl = slog.LevelError
	case kfake.LogLevelWarn:
		lvl = slog.LevelWarn
	default:
		return
	}
	k.l.Log(context.Background(), lvl, "kafka playground: "+fmt.Sprintf(format, args...))
}
