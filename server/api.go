package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/engine"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/internal/wire"
	"github.com/sluice-sql/sluice/kafka"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// API is the engine's typed API behind the typed RPCs (PullQuery, Explain,
// List, Describe, Terminate, Pause, Resume, Insert): *engine.Engine
// implements it. An Engine without it answers them UNIMPLEMENTED.
type API interface {
	Sources(kind catalog.Kind) []engine.SourceInfo
	DescribeSource(name string) (engine.SourceInfo, error)
	Queries() []engine.QueryInfo
	DescribeQuery(id string) (engine.QueryInfo, error)
	Topics(ctx context.Context, all bool) ([]kafka.TopicInfo, error)
	Explain(ctx context.Context, s *engine.Session, sql string) (engine.Explanation, error)
	ExplainQuery(ctx context.Context, id string) (engine.Explanation, error)
	PullQuery(ctx context.Context, s *engine.Session, sql string) (engine.PullResult, error)
	Terminate(ctx context.Context, id string, all bool) (string, error)
	Pause(ctx context.Context, id string, all, resume bool) (string, error)
	Insert(ctx context.Context, target string, rows []engine.InsertRow) (int, error)
}

var _ API = (*engine.Engine)(nil)

func (svc *service) api() (API, error) {
	a, ok := svc.s.eng.(API)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "this server's engine has no typed API; use Execute")
	}
	return a, nil
}

func session(m *sluicev1.Session) *engine.Session {
	s := engine.NewSession()
	maps.Copy(s.Properties, m.GetProperties())
	maps.Copy(s.Variables, m.GetVariables())
	return s
}

// PushQuery implements sluicev1.SluiceServer.
func (svc *service) PushQuery(req *sluicev1.PushQueryRequest, out grpc.ServerStreamingServer[sluicev1.PushQueryResponse]) error {
	s := svc.s
	ctx := out.Context()
	if req.GetLimit() < 0 {
		return status.Errorf(codes.InvalidArgument, "limit is %d; give a positive row count, or 0 for none", req.GetLimit())
	}
	results, err := s.eng.Execute(ctx, session(req.GetSession()), req.GetSql())
	defer func() {
		for _, r := range results {
			if r.Stream != nil {
				r.Stream.Close()
			}
		}
	}()
	if err != nil {
		return s.statusOf(err, len(results))
	}
	if len(results) != 1 || results[0].Kind != engine.ResultStream || results[0].Stream == nil {
		return s.statusOf(&engine.StatementError{Statement: req.GetSql(), Msg: "PushQuery runs one push query (SELECT ... EMIT CHANGES); run other statements with Execute", Code: engine.CodeBadStatement}, 0)
	}
	return s.pushQuery(ctx, results[0], 0, req.GetLimit(), pushSink{
		header: func(h *sluicev1.StreamHeader) error {
			return out.Send(&sluicev1.PushQueryResponse{Payload: &sluicev1.PushQueryResponse_Header{Header: h}})
		},
		row: func(row *sluicev1.Row) error {
			return out.Send(&sluicev1.PushQueryResponse{Payload: &sluicev1.PushQueryResponse_Row{Row: row}})
		},
		end: func(reason sluicev1.EndReason) error {
			return out.Send(&sluicev1.PushQueryResponse{Payload: &sluicev1.PushQueryResponse_End{End: &sluicev1.StreamEnd{Reason: reason}}})
		},
	})
}

// PullQuery implements sluicev1.SluiceServer.
func (svc *service) PullQuery(ctx context.Context, req *sluicev1.PullQueryRequest) (*sluicev1.PullQueryResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	res, err := a.PullQuery(ctx, session(req.GetSession()), req.GetSql())
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	out := &sluicev1.PullQueryResponse{Columns: columns(res.Columns), Rows: make([]*sluicev1.Row, len(res.Rows))}
	for i, row := range res.Rows {
		out.Rows[i] = wire.EncodeRow(row, res.Columns)
	}
	return out, nil
}

// Explain implements sluicev1.SluiceServer.
func (svc *service) Explain(ctx context.Context, req *sluicev1.ExplainRequest) (*sluicev1.ExplainResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	var ex engine.Explanation
	switch t := req.GetTarget().(type) {
	case *sluicev1.ExplainRequest_Sql:
		ex, err = a.Explain(ctx, session(req.GetSession()), t.Sql)
	case *sluicev1.ExplainRequest_QueryId:
		ex, err = a.ExplainQuery(ctx, t.QueryId)
	default:
		return nil, status.Error(codes.InvalidArgument, "Explain needs sql (a statement) or query_id")
	}
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	return &sluicev1.ExplainResponse{Description: wire.ValidUTF8(ex.Description), Columns: columns(ex.Columns), Plan: wire.ValidUTF8(ex.Plan)}, nil
}

// List implements sluicev1.SluiceServer.
func (svc *service) List(ctx context.Context, req *sluicev1.ListRequest) (*sluicev1.ListResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	out := &sluicev1.ListResponse{}
	switch req.GetKind() {
	case sluicev1.ListKind_LIST_KIND_STREAMS, sluicev1.ListKind_LIST_KIND_TABLES:
		kind := catalog.Stream
		if req.GetKind() == sluicev1.ListKind_LIST_KIND_TABLES {
			kind = catalog.Table
		}
		for _, si := range a.Sources(kind) {
			out.Sources = append(out.Sources, sourceDescription(si))
		}
	case sluicev1.ListKind_LIST_KIND_QUERIES:
		for _, qi := range a.Queries() {
			out.Queries = append(out.Queries, queryDescription(qi))
		}
	case sluicev1.ListKind_LIST_KIND_TOPICS:
		topics, err := a.Topics(ctx, req.GetAll())
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		for _, tp := range topics {
			out.Topics = append(out.Topics, &sluicev1.TopicDescription{Name: wire.ValidUTF8(tp.Name), Partitions: tp.Partitions, ReplicationFactor: int32(tp.ReplicationFactor)})
		}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "List needs a kind: LIST_KIND_STREAMS, LIST_KIND_TABLES, LIST_KIND_QUERIES or LIST_KIND_TOPICS (got %s)", req.GetKind())
	}
	return out, nil
}

// Describe implements sluicev1.SluiceServer.
func (svc *service) Describe(_ context.Context, req *sluicev1.DescribeRequest) (*sluicev1.DescribeResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	switch t := req.GetTarget().(type) {
	case *sluicev1.DescribeRequest_Source:
		si, err := a.DescribeSource(t.Source)
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		return &sluicev1.DescribeResponse{Description: &sluicev1.DescribeResponse_Source{Source: sourceDescription(si)}}, nil
	case *sluicev1.DescribeRequest_QueryId:
		qi, err := a.DescribeQuery(t.QueryId)
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		return &sluicev1.DescribeResponse{Description: &sluicev1.DescribeResponse_Query{Query: queryDescription(qi)}}, nil
	}
	return nil, status.Error(codes.InvalidArgument, "Describe needs source (a stream or table name) or query_id")
}

// Terminate implements sluicev1.SluiceServer.
func (svc *service) Terminate(ctx context.Context, req *sluicev1.TerminateRequest) (*sluicev1.QueryControlResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	msg, err := a.Terminate(ctx, req.GetQueryId(), req.GetAll())
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	return &sluicev1.QueryControlResponse{Message: msg}, nil
}

// Pause implements sluicev1.SluiceServer.
func (svc *service) Pause(ctx context.Context, req *sluicev1.PauseRequest) (*sluicev1.QueryControlResponse, error) {
	return svc.pause(ctx, req.GetQueryId(), req.GetAll(), false)
}

// Resume implements sluicev1.SluiceServer.
func (svc *service) Resume(ctx context.Context, req *sluicev1.ResumeRequest) (*sluicev1.QueryControlResponse, error) {
	return svc.pause(ctx, req.GetQueryId(), req.GetAll(), true)
}

func (svc *service) pause(ctx context.Context, id string, all, resume bool) (*sluicev1.QueryControlResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	msg, err := a.Pause(ctx, id, all, resume)
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	return &sluicev1.QueryControlResponse{Message: msg}, nil
}

// Insert implements sluicev1.SluiceServer.
func (svc *service) Insert(ctx context.Context, req *sluicev1.InsertRequest) (*sluicev1.InsertResponse, error) {
	a, err := svc.api()
	if err != nil {
		return nil, err
	}
	if req.GetTarget() == "" {
		return nil, status.Error(codes.InvalidArgument, "Insert needs a target stream or table")
	}
	rows := make([]engine.InsertRow, len(req.GetRows()))
	for i, r := range req.GetRows() {
		if len(r.GetValues()) > 0 {
			for _, name := range sortedKeys(r.GetValues()) {
				v, t := wire.DecodeValue(r.GetValues()[name])
				rows[i].Add(name, v, t)
			}
			continue
		}
		if err := jsonRow(&rows[i], r.GetJson()); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "row %d: %v", i+1, err)
		}
	}
	n, err := a.Insert(ctx, req.GetTarget(), rows)
	if err != nil {
		// The message names the failing row; those before it were written.
		return nil, svc.s.statusOf(err, 0)
	}
	return &sluicev1.InsertResponse{Rows: int64(n)}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jsonRow reads a JSON object of column names to values into r. Numbers
// keep their text as DECIMAL (or BIGINT when integral), so that the
// column's type decides, as an INSERT VALUES constant does.
func jsonRow(r *engine.InsertRow, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("the row is empty: give values or a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("json must be one JSON object of column names to values: %v", err)
	}
	for _, name := range sortedKeys(obj) {
		v, t, err := jsonValue(obj[name])
		if err != nil {
			return fmt.Errorf("column %s: %v", name, err)
		}
		r.Add(name, v, t)
	}
	return nil
}

func jsonValue(x any) (any, *types.Type, error) {
	switch v := x.(type) {
	case nil:
		return nil, nil, nil
	case bool:
		return v, types.BooleanType, nil
	case string:
		return v, types.StringType, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, types.BigintType, nil
		}
		d, err := types.ParseDec(v.String())
		if err != nil {
			f, ferr := v.Float64()
			if ferr != nil {
				return nil, nil, fmt.Errorf("bad number %s", v)
			}
			return f, types.DoubleType, nil
		}
		return d, types.DecimalOf(max(d.Precision(), d.Scale), d.Scale), nil
	case []any:
		out := make([]any, len(v))
		var elem *types.Type
		for i, e := range v {
			var t *types.Type
			var err error
			if out[i], t, err = jsonValue(e); err != nil {
				return nil, nil, err
			}
			if elem == nil {
				elem = t
			}
		}
		return out, types.ArrayOf(elem), nil
	case map[string]any:
		keys := sortedKeys(v)
		s := make(types.StructValue, len(keys))
		fields := make([]types.Field, len(keys))
		for i, k := range keys {
			var err error
			if s[i], fields[i].Type, err = jsonValue(v[k]); err != nil {
				return nil, nil, err
			}
			fields[i].Name = k
		}
		return s, types.StructOf(fields...), nil
	}
	return nil, nil, fmt.Errorf("unsupported JSON value %v", x)
}

func columns(cols []types.Column) []*sluicev1.Column {
	out := make([]*sluicev1.Column, len(cols))
	for i, c := range cols {
		out[i] = &sluicev1.Column{Name: wire.ValidUTF8(c.Name), Type: wire.ValidUTF8(c.Type.String())}
	}
	return out
}

func sourceDescription(si engine.SourceInfo) *sluicev1.SourceDescription {
	kind := sluicev1.SourceKind_SOURCE_KIND_STREAM
	if si.Kind == catalog.Table {
		kind = sluicev1.SourceKind_SOURCE_KIND_TABLE
	}
	d := &sluicev1.SourceDescription{
		Name: wire.ValidUTF8(si.Name), Kind: kind, Topic: wire.ValidUTF8(si.Topic), Partitions: si.Partitions,
		KeyFormat: si.KeyFormat, ValueFormat: si.ValueFormat, Windowed: si.Windowed, Timestamp: wire.ValidUTF8(si.Timestamp),
		Sql: wire.ValidUTF8(si.SQL), Writers: validUTF8(si.Writers), Readers: validUTF8(si.Readers), ReadOnly: si.ReadOnly,
	}
	for _, c := range si.Columns {
		role := sluicev1.ColumnRole_COLUMN_ROLE_VALUE
		switch c.Role {
		case engine.RoleKey:
			role = sluicev1.ColumnRole_COLUMN_ROLE_KEY
		case engine.RoleHeader:
			role = sluicev1.ColumnRole_COLUMN_ROLE_HEADER
		}
		d.Columns = append(d.Columns, &sluicev1.SourceColumn{Name: wire.ValidUTF8(c.Name), Type: wire.ValidUTF8(c.Type.String()), Role: role, Header: wire.ValidUTF8(c.Header)})
	}
	return d
}

func queryDescription(qi engine.QueryInfo) *sluicev1.QueryDescription {
	typ := sluicev1.QueryType_QUERY_TYPE_PERSISTENT
	if qi.Push {
		typ = sluicev1.QueryType_QUERY_TYPE_PUSH
	}
	return &sluicev1.QueryDescription{
		Id: wire.ValidUTF8(qi.ID), Type: typ, Status: wire.ValidUTF8(qi.Status), Sink: wire.ValidUTF8(qi.Sink),
		SinkTopic: wire.ValidUTF8(qi.SinkTopic), Sql: wire.ValidUTF8(qi.SQL), Sources: validUTF8(qi.Sources),
		Columns: columns(qi.Columns), RecordsIn: qi.Stats.RecordsIn, RecordsOut: qi.Stats.RecordsOut, Errors: qi.Stats.Errors,
		Filtered: qi.Stats.Filtered, Late: qi.Stats.Late, NullsDropped: qi.Stats.NullsDropped,
	}
}
