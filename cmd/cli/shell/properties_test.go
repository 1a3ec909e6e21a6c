package shell

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/kafka"
)

// TestSettableProperties checks that the properties TAB completes after
// SET are the ones the engine accepts, which it lists when SET names
// another.
func TestSettableProperties(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	broker, err := kafka.StartPlayground(ctx, kafka.PlaygroundConfig{Addr: "127.0.0.1:0", DataDir: filepath.Join(dir, "kafka")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(broker.Close)
	client, err := kafka.NewFranz(kafka.Config{Brokers: []string{broker.Addr()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	eng, err := engine.Open(ctx, engine.Config{Kafka: client, DataDir: filepath.Join(dir, "state"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	sh, _, errOut := newTestShell(t, eng)
	if err := sh.Run(ctx, "", "SET 'no.such.property'='x';"); err == nil {
		t.Fatal("SET of an unknown property succeeded")
	}
	m := regexp.MustCompile(`properties Sluice uses: ([^\n]*)`).FindStringSubmatch(errOut.String())
	if m == nil {
		t.Fatalf("the error does not list the properties: %s", errOut)
	}
	var engineList []string
	for _, p := range strings.Split(m[1], ", ") {
		engineList = append(engineList, strings.Trim(p, "'"))
	}
	slices.Sort(engineList)
	if !slices.Equal(engineList, settableProperties) {
		t.Errorf("settableProperties = %q\nthe engine takes %q", settableProperties, engineList)
	}
}
