package wire

import (
	"github.com/sluice-sql/sluice/engine/api"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// This file converts the engine's typed results (package api) to their
// protobuf form. Strings are made valid UTF-8, as protobuf requires (names
// and statements may hold what a user or a topic gave).

// EncodeEntity converts a listing or description; statement is its
// statement's text.
func EncodeEntity(statement string, en api.Entity) *sluicev1.Entity {
	out := &sluicev1.Entity{Statement: ValidUTF8(statement)}
	switch en := en.(type) {
	case *api.SourceList:
		l := &sluicev1.SourceList{Kind: EncodeSourceKind(en.Kind), Extended: en.Extended}
		for i := range en.Sources {
			l.Sources = append(l.Sources, EncodeSource(&en.Sources[i]))
		}
		out.Kind = &sluicev1.Entity_Sources{Sources: l}
	case *api.SourceDescription:
		out.Kind = &sluicev1.Entity_Source{Source: EncodeSourceDetail(en)}
	case *api.QueryList:
		l := &sluicev1.QueryList{Extended: en.Extended, Cluster: en.Cluster}
		for i := range en.Queries {
			l.Queries = append(l.Queries, EncodeQuery(&en.Queries[i]))
		}
		out.Kind = &sluicev1.Entity_Queries{Queries: l}
	case *api.TopicList:
		l := &sluicev1.TopicList{All: en.All}
		for _, tp := range en.Topics {
			l.Topics = append(l.Topics, EncodeTopic(tp))
		}
		out.Kind = &sluicev1.Entity_Topics{Topics: l}
	case *api.PropertyList:
		l := &sluicev1.PropertyList{}
		for _, p := range en.Properties {
			l.Properties = append(l.Properties, &sluicev1.Property{Name: ValidUTF8(p.Name), Scope: p.Scope, Value: ValidUTF8(p.Value)})
		}
		out.Kind = &sluicev1.Entity_Properties{Properties: l}
	case *api.VariableList:
		l := &sluicev1.VariableList{}
		for _, v := range en.Variables {
			l.Variables = append(l.Variables, &sluicev1.Variable{Name: ValidUTF8(v.Name), Value: ValidUTF8(v.Value)})
		}
		out.Kind = &sluicev1.Entity_Variables{Variables: l}
	case *api.TypeList:
		l := &sluicev1.TypeList{}
		for _, t := range en.Types {
			l.Types = append(l.Types, &sluicev1.NamedType{Name: ValidUTF8(t.Name), Type: ValidUTF8(t.Type.String())})
		}
		out.Kind = &sluicev1.Entity_Types{Types: l}
	case *api.FunctionList:
		l := &sluicev1.FunctionList{}
		for _, f := range en.Functions {
			l.Functions = append(l.Functions, encodeFunction(f))
		}
		out.Kind = &sluicev1.Entity_Functions{Functions: l}
	case *api.FunctionDescription:
		out.Kind = &sluicev1.Entity_Function{Function: encodeFunction(en.Function)}
	case *api.QueryDescription:
		out.Kind = &sluicev1.Entity_Plan{Plan: EncodePlan(en)}
	case *api.ConnectorInfo:
		c := &sluicev1.ConnectorInfo{Name: ValidUTF8(en.Name), Type: en.Type, Config: validMap(en.Config)}
		for _, id := range en.Tasks {
			c.Tasks = append(c.Tasks, int32(id))
		}
		out.Kind = &sluicev1.Entity_Connector{Connector: c}
	case *api.ConnectorList:
		l := &sluicev1.ConnectorList{Warnings: validUTF8(en.Warnings)}
		for _, c := range en.Connectors {
			l.Connectors = append(l.Connectors, &sluicev1.ConnectorSummary{Name: ValidUTF8(c.Name), Type: c.Type,
				Class: ValidUTF8(c.Class), State: ValidUTF8(c.State)})
		}
		out.Kind = &sluicev1.Entity_Connectors{Connectors: l}
	case *api.ConnectorDescription:
		out.Kind = &sluicev1.Entity_ConnectorDescription{ConnectorDescription: EncodeConnector(en)}
	case *api.ConnectorDropped:
		out.Kind = &sluicev1.Entity_DroppedConnector{DroppedConnector: &sluicev1.DroppedConnector{Name: ValidUTF8(en.Name)}}
	case *api.Warning:
		out.Kind = &sluicev1.Entity_Warning{Warning: &sluicev1.Warning{Message: ValidUTF8(en.Message)}}
	}
	return out
}

// EncodeConnector converts DESCRIBE CONNECTOR's answer.
func EncodeConnector(d *api.ConnectorDescription) *sluicev1.ConnectorDescription {
	state := func(s api.ConnectorState) *sluicev1.ConnectorState {
		return &sluicev1.ConnectorState{State: s.State, WorkerId: ValidUTF8(s.WorkerID), Trace: ValidUTF8(s.Trace)}
	}
	out := &sluicev1.ConnectorDescription{Name: ValidUTF8(d.Name), Class: ValidUTF8(d.Class), Type: d.Type,
		Connector: state(d.Connector), Topics: validUTF8(d.Topics), Config: validMap(d.Config), Warnings: validUTF8(d.Warnings)}
	for _, t := range d.Tasks {
		out.Tasks = append(out.Tasks, &sluicev1.ConnectorTask{Id: int32(t.ID), State: state(t.ConnectorState)})
	}
	for i := range d.Sources {
		out.Sources = append(out.Sources, EncodeSource(&d.Sources[i]))
	}
	return out
}

func validMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[ValidUTF8(k)] = ValidUTF8(v)
	}
	return out
}

func encodeFunction(f api.FunctionInfo) *sluicev1.FunctionInfo {
	return &sluicev1.FunctionInfo{Name: f.Name, Type: f.Type, Category: f.Category, Description: ValidUTF8(f.Description), Variations: f.Variations}
}

// EncodeSourceKind converts a source kind.
func EncodeSourceKind(k api.SourceKind) sluicev1.SourceKind {
	if k == api.SourceTable {
		return sluicev1.SourceKind_SOURCE_KIND_TABLE
	}
	return sluicev1.SourceKind_SOURCE_KIND_STREAM
}

// EncodeRole converts a column role.
func EncodeRole(r api.ColumnRole) sluicev1.ColumnRole {
	switch r {
	case api.RoleKey:
		return sluicev1.ColumnRole_COLUMN_ROLE_KEY
	case api.RoleHeader:
		return sluicev1.ColumnRole_COLUMN_ROLE_HEADER
	case api.RoleWindowStart:
		return sluicev1.ColumnRole_COLUMN_ROLE_WINDOW_START
	case api.RoleWindowEnd:
		return sluicev1.ColumnRole_COLUMN_ROLE_WINDOW_END
	}
	return sluicev1.ColumnRole_COLUMN_ROLE_VALUE
}

// EncodeSource converts a stream's or table's description.
func EncodeSource(si *api.SourceInfo) *sluicev1.SourceDescription {
	d := &sluicev1.SourceDescription{
		Name: ValidUTF8(si.Name), Kind: EncodeSourceKind(si.Kind), Topic: ValidUTF8(si.Topic), Partitions: si.Partitions,
		KeyFormat: si.KeyFormat, ValueFormat: si.ValueFormat, Windowed: si.Windowed(), Timestamp: ValidUTF8(si.Timestamp),
		Sql: ValidUTF8(si.SQL), Writers: validUTF8(si.Writers), Readers: validUTF8(si.Readers), ReadOnly: si.ReadOnly,
		Window: ValidUTF8(si.Window), WindowType: si.WindowType,
	}
	for _, c := range si.Columns {
		d.Columns = append(d.Columns, &sluicev1.SourceColumn{Name: ValidUTF8(c.Name), Type: ValidUTF8(c.Type.String()), Role: EncodeRole(c.Role), Header: ValidUTF8(c.Header)})
	}
	return d
}

// EncodeSourceDetail converts DESCRIBE's answer.
func EncodeSourceDetail(d *api.SourceDescription) *sluicev1.SourceDetail {
	out := &sluicev1.SourceDetail{Source: EncodeSource(&d.Source), Extended: d.Extended, Cluster: ValidUTF8(d.Cluster)}
	for i := range d.Writers {
		out.Writers = append(out.Writers, EncodeQuery(&d.Writers[i]))
	}
	for i := range d.Readers {
		out.Readers = append(out.Readers, EncodeQuery(&d.Readers[i]))
	}
	return out
}

// EncodeQuery converts a query's description.
func EncodeQuery(qi *api.QueryInfo) *sluicev1.QueryDescription {
	typ := sluicev1.QueryType_QUERY_TYPE_PERSISTENT
	if qi.Type == api.Push {
		typ = sluicev1.QueryType_QUERY_TYPE_PUSH
	}
	s := qi.Stats
	out := &sluicev1.QueryDescription{
		Id: ValidUTF8(qi.ID), Type: typ, Status: ValidUTF8(qi.Status), State: ValidUTF8(qi.State), Sink: ValidUTF8(qi.Sink),
		SinkTopic: ValidUTF8(qi.SinkTopic), Sql: ValidUTF8(qi.SQL), Sources: validUTF8(qi.Sources),
		Columns: EncodeColumns(api.Columns(qi.Columns, qi.KeyColumns)), KeyColumns: int32(qi.KeyColumns),
		Guarantee: qi.Guarantee, Running: qi.Running, Partitions: ValidUTF8(qi.Partitions),
		RecordsIn: s.RecordsIn, RecordsOut: s.RecordsOut, Errors: s.Errors, Filtered: s.Filtered, Late: s.Late,
		NullsDropped: s.NullsDropped, Restoring: s.Restoring, RestorePercent: int32(s.RestorePercent),
		LagMeasured: s.LagMeasured, LagRecords: s.LagRecords, LagSeconds: s.LagSeconds,
	}
	if !s.LastRecord.IsZero() {
		out.LastRecordMillis = s.LastRecord.UnixMilli()
	}
	return out
}

// EncodeTopic converts a Kafka topic's description.
func EncodeTopic(tp api.Topic) *sluicev1.TopicDescription {
	return &sluicev1.TopicDescription{Name: ValidUTF8(tp.Name), Partitions: tp.Partitions, ReplicationFactor: int32(tp.ReplicationFactor)}
}

// EncodePlan converts EXPLAIN's answer.
func EncodePlan(d *api.QueryDescription) *sluicev1.QueryPlan {
	out := &sluicev1.QueryPlan{Statement: ValidUTF8(d.Statement), Pull: d.Pull,
		Reads: &sluicev1.PullReads{Source: ValidUTF8(d.Reads.Source), Query: ValidUTF8(d.Reads.Query), Lookup: ValidUTF8(d.Reads.Lookup)}}
	if d.Query != nil {
		out.Query = EncodeQuery(d.Query)
	}
	for _, l := range d.Plan {
		out.Lines = append(out.Lines, &sluicev1.PlanLine{Depth: int32(l.Depth), Operator: l.Operator, Details: validUTF8(l.Details)})
	}
	if d.Topology != nil {
		out.Topology = EncodeTopology(d.Topology)
	}
	return out
}

// EncodeTopology converts a query's processing topology.
func EncodeTopology(t *api.Topology) *sluicev1.Topology {
	out := &sluicev1.Topology{Unknown: t.Unknown}
	for _, s := range t.Stages {
		ps := &sluicev1.TopologyStage{Id: int32(s.ID), Right: s.Right, JoinStage: int32(s.JoinStage), Inside: s.Inside,
			Source: ValidUTF8(s.Source), SourceRole: ValidUTF8(s.SourceRole), SourcePartitions: s.SourcePartitions,
			Sink: ValidUTF8(s.Sink), SinkRole: s.SinkRole, SinkPartitions: s.SinkPartitions, Output: ValidUTF8(s.Output),
			TableRows: s.TableRows}
		for _, j := range s.Joins {
			ps.Joins = append(ps.Joins, int32(j))
		}
		for _, n := range s.Nodes {
			pn := &sluicev1.TopologyNode{Operator: n.Operator, Details: validUTF8(n.Details)}
			for _, st := range n.Stores {
				pn.Stores = append(pn.Stores, &sluicev1.TopologyStore{Name: ValidUTF8(st.Name), Role: st.Role,
					Key: validUTF8(st.Key), Value: validUTF8(st.Value), Windowed: st.Windowed, Changelog: ValidUTF8(st.Changelog)})
			}
			ps.Nodes = append(ps.Nodes, pn)
		}
		out.Stages = append(out.Stages, ps)
	}
	for _, tp := range t.Topics {
		var cfg map[string]string
		if len(tp.Config) > 0 {
			cfg = make(map[string]string, len(tp.Config))
			for k, v := range tp.Config {
				cfg[ValidUTF8(k)] = ValidUTF8(v)
			}
		}
		out.Topics = append(out.Topics, &sluicev1.TopologyTopic{Name: ValidUTF8(tp.Name), Role: tp.Role, Partitions: tp.Partitions, Config: cfg})
	}
	return out
}

// EncodeColumns converts a row stream's schema.
func EncodeColumns(cols []api.Column) []*sluicev1.Column {
	out := make([]*sluicev1.Column, len(cols))
	for i, c := range cols {
		out[i] = &sluicev1.Column{Name: ValidUTF8(c.Name), Type: ValidUTF8(c.Type.String()), Role: EncodeRole(c.Role)}
		if c.Role == api.RoleValue {
			out[i].Role = sluicev1.ColumnRole_COLUMN_ROLE_UNSPECIFIED
		}
	}
	return out
}

// EncodeEnd converts a row stream's end.
func EncodeEnd(r api.EndReason, err error) *sluicev1.StreamEnd {
	end := &sluicev1.StreamEnd{Reason: sluicev1.EndReason_END_REASON_COMPLETED}
	switch r {
	case api.EndLimit:
		end.Reason = sluicev1.EndReason_END_REASON_LIMIT_REACHED
	case api.EndClosed:
		end.Reason = sluicev1.EndReason_END_REASON_CLOSED
	case api.EndError:
		end.Reason = sluicev1.EndReason_END_REASON_ERROR
	}
	if err != nil {
		end.Reason, end.Message = sluicev1.EndReason_END_REASON_ERROR, ValidUTF8(err.Error())
	}
	return end
}

// EncodeError converts a failed statement's error; index is the
// statement's among the request's.
func EncodeError(se *api.StatementError, index int) *sluicev1.StatementError {
	return &sluicev1.StatementError{StatementIndex: int32(index), Statement: ValidUTF8(se.Statement), Line: int32(se.Line),
		Column: int32(se.Col), Message: ValidUTF8(se.Msg), Code: int32(se.Code), Hint: ValidUTF8(se.Hint),
		StatementStart: int32(se.Start), StatementEnd: int32(se.End)}
}

// validUTF8 returns ss, or a copy with its strings made valid UTF-8.
func validUTF8(ss []string) []string {
	var out []string
	for i, s := range ss {
		if v := ValidUTF8(s); v != s {
			if out == nil {
				out = append([]string(nil), ss...)
			}
			out[i] = v
		}
	}
	if out == nil {
		return ss
	}
	return out
}
