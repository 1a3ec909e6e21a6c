package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/render"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

func session(m *sluicev1.Session) *api.Session {
	s := api.NewSession()
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
	if len(results) != 1 || results[0].Kind != api.ResultRows || results[0].Stream == nil || results[0].Stream.Pull {
		return s.statusOf(&api.StatementError{Statement: req.GetSql(), Msg: "PushQuery runs one push query (SELECT ... EMIT CHANGES); run other statements with Execute", Code: api.CodeBadStatement}, 0)
	}
	return s.pushQuery(ctx, results[0], 0, req.GetLimit(), pushSink{
		header: func(h *sluicev1.StreamHeader) error {
			return out.Send(&sluicev1.PushQueryResponse{Payload: &sluicev1.PushQueryResponse_Header{Header: h}})
		},
		row: func(row *sluicev1.Row) error {
			return out.Send(&sluicev1.PushQueryResponse{Payload: &sluicev1.PushQueryResponse_Row{Row: row}})
		},
		end: func(end *sluicev1.StreamEnd) error {
			return out.Send(&sluicev1.PushQueryResponse{Payload: &sluicev1.PushQueryResponse_End{End: end}})
		},
	})
}

// PullQuery implements sluicev1.SluiceServer.
func (svc *service) PullQuery(ctx context.Context, req *sluicev1.PullQueryRequest) (*sluicev1.PullQueryResponse, error) {
	rows, err := svc.s.eng.PullQuery(ctx, session(req.GetSession()), req.GetSql())
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	defer rows.Close()
	typed := rows.TypedColumns()
	out := &sluicev1.PullQueryResponse{Columns: wire.EncodeColumns(rows.Columns)}
	for {
		row, err := rows.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		out.Rows = append(out.Rows, wire.EncodeRow(row, typed))
	}
}

// Explain implements sluicev1.SluiceServer.
func (svc *service) Explain(ctx context.Context, req *sluicev1.ExplainRequest) (*sluicev1.ExplainResponse, error) {
	var d *api.QueryDescription
	var err error
	switch t := req.GetTarget().(type) {
	case *sluicev1.ExplainRequest_Sql:
		d, err = svc.s.eng.Explain(ctx, session(req.GetSession()), t.Sql)
	case *sluicev1.ExplainRequest_QueryId:
		d, err = svc.s.eng.ExplainQuery(ctx, t.QueryId)
	default:
		return nil, status.Error(codes.InvalidArgument, "Explain needs sql (a statement) or query_id")
	}
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	p := wire.EncodePlan(d)
	out := &sluicev1.ExplainResponse{Description: render.Description(p), Plan: render.PlanText(p.GetLines()),
		Topology: render.TopologyText(p.GetTopology()), Value: p}
	if d.Query != nil {
		out.Columns = wire.EncodeColumns(api.Columns(d.Query.Columns, d.Query.KeyColumns))
	}
	return out, nil
}

// List implements sluicev1.SluiceServer.
func (svc *service) List(ctx context.Context, req *sluicev1.ListRequest) (*sluicev1.ListResponse, error) {
	out := &sluicev1.ListResponse{}
	switch req.GetKind() {
	case sluicev1.ListKind_LIST_KIND_STREAMS, sluicev1.ListKind_LIST_KIND_TABLES:
		kind := api.SourceStream
		if req.GetKind() == sluicev1.ListKind_LIST_KIND_TABLES {
			kind = api.SourceTable
		}
		for _, si := range svc.s.eng.Sources(kind) {
			out.Sources = append(out.Sources, wire.EncodeSource(&si))
		}
	case sluicev1.ListKind_LIST_KIND_QUERIES:
		for _, qi := range svc.s.eng.Queries(ctx) {
			out.Queries = append(out.Queries, wire.EncodeQuery(&qi))
		}
	case sluicev1.ListKind_LIST_KIND_TOPICS:
		topics, err := svc.s.eng.Topics(ctx, req.GetAll())
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		for _, tp := range topics {
			out.Topics = append(out.Topics, wire.EncodeTopic(tp))
		}
	default:
		return nil, status.Errorf(codes.InvalidArgument, "List needs a kind: LIST_KIND_STREAMS, LIST_KIND_TABLES, LIST_KIND_QUERIES or LIST_KIND_TOPICS (got %s)", req.GetKind())
	}
	return out, nil
}

// Describe implements sluicev1.SluiceServer.
func (svc *service) Describe(ctx context.Context, req *sluicev1.DescribeRequest) (*sluicev1.DescribeResponse, error) {
	switch t := req.GetTarget().(type) {
	case *sluicev1.DescribeRequest_Source:
		d, err := svc.s.eng.DescribeSource(ctx, t.Source, false)
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		return &sluicev1.DescribeResponse{Description: &sluicev1.DescribeResponse_Source{Source: wire.EncodeSource(&d.Source)}}, nil
	case *sluicev1.DescribeRequest_QueryId:
		qi, err := svc.s.eng.DescribeQuery(ctx, t.QueryId)
		if err != nil {
			return nil, svc.s.statusOf(err, 0)
		}
		return &sluicev1.DescribeResponse{Description: &sluicev1.DescribeResponse_Query{Query: wire.EncodeQuery(&qi)}}, nil
	}
	return nil, status.Error(codes.InvalidArgument, "Describe needs source (a stream or table name) or query_id")
}

// Terminate implements sluicev1.SluiceServer.
func (svc *service) Terminate(ctx context.Context, req *sluicev1.TerminateRequest) (*sluicev1.QueryControlResponse, error) {
	msg, err := svc.s.eng.Terminate(ctx, req.GetQueryId(), req.GetAll())
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
	msg, err := svc.s.eng.Pause(ctx, id, all, resume)
	if err != nil {
		return nil, svc.s.statusOf(err, 0)
	}
	return &sluicev1.QueryControlResponse{Message: msg}, nil
}

// Insert implements sluicev1.SluiceServer.
func (svc *service) Insert(ctx context.Context, req *sluicev1.InsertRequest) (*sluicev1.InsertResponse, error) {
	if req.GetTarget() == "" {
		return nil, status.Error(codes.InvalidArgument, "Insert needs a target stream or table")
	}
	rows := make([]api.InsertRow, len(req.GetRows()))
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
	n, err := svc.s.eng.Insert(ctx, req.GetTarget(), rows)
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

// jsonRow reads a JSON object of column names to values into r. The
// values keep their JSON form, with numbers as their text (json.Number):
// the engine converts each to its column's type, as ksqlDB reads a row
// inserted as JSON (see api.InsertRow).
func jsonRow(r *api.InsertRow, text string) error {
	if strings.TrimSpace(text) == "" {
		return fmt.Errorf("the row is empty: give values or a JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return fmt.Errorf("json must be one JSON object of column names to values: %v", err)
	}
	for _, name := range sortedKeys(obj) {
		r.Add(name, obj[name], nil)
	}
	return nil
}
