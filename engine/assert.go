package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluice-sql/sluice/engine/api"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sql/sluice/kafka"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/registry"
)

// ASSERT TOPIC and ASSERT SCHEMA, as ksqlDB runs them for its migrations
// tool: the condition is checked every assertRetry until it holds or the
// statement's TIMEOUT (else the session's ksql.assert.*.default.timeout.ms,
// else one second) passes; a condition that still fails is an assertion
// error (ksqlDB's 417).

const (
	propAssertTopicTimeout  = "ksql.assert.topic.default.timeout.ms"
	propAssertSchemaTimeout = "ksql.assert.schema.default.timeout.ms"
	defaultAssertTimeout    = time.Second
	assertRetry             = 100 * time.Millisecond
)

func assertTimeout(s *Session, given *time.Duration, prop string) time.Duration {
	if given != nil {
		return *given
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(s.Properties[prop]), 10, 64); err == nil && n >= 0 {
		return time.Duration(n) * time.Millisecond
	}
	return defaultAssertTimeout
}

// retryAssertion runs check until it reports done, or the timeout or ctx
// ends; it returns check's last failure.
func retryAssertion(ctx context.Context, timeout time.Duration, check func() (done bool, fail error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, fail := check()
		if done {
			return nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return fail
		}
		t := time.NewTimer(min(wait, assertRetry))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func assertionError(st ast.Statement, msg, hint string) error {
	p := st.Position()
	return &StatementError{Statement: st.SQL(), Line: p.Line, Col: p.Col, Msg: msg, Hint: hint, Code: api.CodeAssertionFailed}
}

func (e *Engine) assertTopic(ctx context.Context, s *Session, st *ast.AssertTopic) (Result, error) {
	want := map[string]int64{}
	for _, p := range st.Props {
		switch p.Name {
		case "PARTITIONS", "REPLICAS":
			n, err := strconv.ParseInt(p.Value.Text, 10, 32)
			if err != nil || p.Value.Kind != ast.IntLit {
				return Result{}, userError(p.Pos, "%s must be a whole number, e.g. %s=3, not %s", p.Name, p.Name, p.Value.Text)
			}
			want[p.Name] = n
		}
	}
	var unknown []string
	for _, p := range st.Props {
		if p.Name != "PARTITIONS" && p.Name != "REPLICAS" {
			unknown = append(unknown, "Cannot assert unknown topic property: "+p.Name)
		}
	}
	var infoErr error
	err := retryAssertion(ctx, assertTimeout(s, st.Timeout, propAssertTopicTimeout), func() (bool, error) {
		info, err := e.cfg.Kafka.DescribeTopic(ctx, st.Topic)
		exists := err == nil
		if err != nil && !errors.Is(err, kafka.ErrUnknownTopic) {
			infoErr = err
			return false, fmt.Errorf("Cannot check topic existence: %v", err)
		}
		if st.NotExists {
			if exists {
				return false, fmt.Errorf("Topic %s exists", st.Topic)
			}
			return true, nil
		}
		if !exists {
			return false, fmt.Errorf("Topic %s does not exist", st.Topic)
		}
		errs := append([]string(nil), unknown...)
		if n, ok := want["PARTITIONS"]; ok && n != int64(info.Partitions) {
			errs = append(errs, fmt.Sprintf("Mismatched configuration for topic %s: For config partitions, expected %d got %d", st.Topic, n, info.Partitions))
		}
		if n, ok := want["REPLICAS"]; ok && n != int64(info.ReplicationFactor) {
			errs = append(errs, fmt.Sprintf("Mismatched configuration for topic %s: For config replicas, expected %d got %d", st.Topic, n, info.ReplicationFactor))
		}
		if len(errs) > 0 {
			return false, errors.New(strings.Join(errs, "\n"))
		}
		return true, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, err
		}
		if infoErr != nil {
			return Result{}, internal("%v", err)
		}
		return Result{}, assertionError(st, err.Error(), "")
	}
	if st.NotExists {
		return Result{Kind: ResultStatus, Message: "Topic " + st.Topic + " does not exist"}, nil
	}
	return Result{Kind: ResultStatus, Message: "Topic " + st.Topic + " exists"}, nil
}

func (e *Engine) assertSchema(ctx context.Context, s *Session, st *ast.AssertSchema) (Result, error) {
	if e.cfg.Registry == nil {
		return Result{}, userError(st.Pos, "ASSERT SCHEMA needs a schema registry; start the server with --schema-registry-url=URL, or in playground mode")
	}
	what := "Schema with"
	if st.Subject != "" {
		what += " subject name " + st.Subject
	}
	if st.ID != nil {
		what += " id " + strconv.Itoa(*st.ID)
	}
	var lookupErr error
	err := retryAssertion(ctx, assertTimeout(s, st.Timeout, propAssertSchemaTimeout), func() (bool, error) {
		exists, err := e.schemaExists(ctx, st.Subject, st.ID)
		if err != nil {
			lookupErr = err
			return false, fmt.Errorf("Cannot check schema existence: %v", err)
		}
		switch {
		case st.NotExists && exists:
			return false, errors.New(what + " exists")
		case !st.NotExists && !exists:
			return false, errors.New(what + " does not exist")
		}
		return true, nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, err
		}
		if lookupErr != nil {
			return Result{}, internal("%v", err)
		}
		return Result{}, assertionError(st, err.Error(), "")
	}
	if st.NotExists {
		return Result{Kind: ResultStatus, Message: what + " does not exist"}, nil
	}
	return Result{Kind: ResultStatus, Message: what + " exists"}, nil
}

// schemaExists reports whether the registry holds the subject's latest
// schema, the schema of the id, or the schema of the id under the subject.
func (e *Engine) schemaExists(ctx context.Context, subject string, id *int) (bool, error) {
	found := func(err error) (bool, error) {
		if errors.Is(err, registry.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
	switch {
	case id != nil && subject != "":
		if ok, err := found(e.subjectHasID(ctx, subject, *id)); !ok || err != nil {
			return ok, err
		}
		return true, nil
	case id != nil:
		_, err := e.cfg.Registry.ByID(ctx, *id)
		return found(err)
	default:
		_, err := e.cfg.Registry.Latest(ctx, subject)
		return found(err)
	}
}

// subjectHasID fails with registry.ErrNotFound unless one of subject's
// versions has the schema id.
func (e *Engine) subjectHasID(ctx context.Context, subject string, id int) error {
	latest, err := e.cfg.Registry.Latest(ctx, subject)
	if err != nil {
		return err
	}
	for v := latest.Version; v >= 1; v-- {
		s, err := e.cfg.Registry.Version(ctx, subject, v)
		if errors.Is(err, registry.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if s.ID == id {
			return nil
		}
	}
	return registry.ErrNotFound
}
