package main

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// keepForever sets the cluster's default log.retention.ms to -1. The events
// carry event times of the past, and so do the records that queries derive
// from them (outputs, changelogs, the peers' internal topics): with the
// broker's default time-based retention they would be deleted at its next
// retention check, in the middle of a run.
func keepForever(ctx context.Context, brokers []string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	defer adm.Close()
	resps, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: kadm.StringPtr("-1")}})
	if err != nil {
		return fmt.Errorf("set the cluster's log.retention.ms: %w", err)
	}
	for _, r := range resps {
		if r.Err != nil {
			return fmt.Errorf("set the cluster's log.retention.ms: %w %s", r.Err, r.ErrMessage)
		}
	}
	return nil
}
