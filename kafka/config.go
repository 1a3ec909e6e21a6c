package kafka

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"time"
)

// Config configures a Client. Both adapters read the same fields.
type Config struct {
	// Brokers are the bootstrap "host:port" addresses; at least one.
	Brokers []string
	// ClientID names the client in broker logs; "sluice" when empty.
	ClientID string
	// Logger receives the client library's warnings and errors; nothing
	// is logged when nil.
	Logger *slog.Logger
	// TLS, when set, encrypts every connection with this configuration.
	TLS *tls.Config
	// SASL, when set, authenticates every connection.
	SASL *SASL
	// AllowAutoTopicCreation lets producers and consumers ask the broker
	// to create a topic on first use (the broker must allow it too). Off by
	// default: Sluice creates the topics it writes.
	AllowAutoTopicCreation bool
	// RequestTimeout bounds a single admin request when the caller's
	// context has no deadline; 30s when zero.
	RequestTimeout time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if len(c.Brokers) == 0 {
		return c, errors.New("kafka: config: no brokers")
	}
	if c.ClientID == "" {
		c.ClientID = "sluice"
	}
	if c.SASL != nil {
		if err := c.SASL.Validate(); err != nil {
			return c, err
		}
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	return c, nil
}
