package server

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/sluice-sql/sluice/engine/api"
	"github.com/sluice-sql/sluice/internal/wire"
	sluicev1 "github.com/sluice-sql/sluice/proto/sluicev1"
)

// Engine is what the server needs from the engine: *engine.Engine
// implements it. Execute is called concurrently, once per request.
type Engine = api.Engine

// Options configure a Server. The zero value is usable.
type Options struct {
	// Version is reported by the Info call.
	Version string
	// ServiceID names the Sluice cluster; reported by Info.
	ServiceID string
	// KafkaBootstrapServers is the Kafka cluster in use; reported by Info.
	KafkaBootstrapServers string
	// Playground is true when the server runs its own development broker;
	// reported by Info.
	Playground bool
	// SchemaRegistryURL is the schema registry in use, without
	// credentials; reported by Info.
	SchemaRegistryURL string
	// Logger receives the server's logs; default slog.Default().
	Logger *slog.Logger
	// GRPCOptions are passed to grpc.NewServer.
	GRPCOptions []grpc.ServerOption
	// PushMaxRows and PushMaxBytes bound what a push query buffers for a
	// client that reads slower than rows arrive (defaults
	// DefaultPushMaxRows and DefaultPushMaxBytes). A full buffer holds the
	// query back until the client reads; a client that reads nothing for
	// PushStallTimeout is dropped with RESOURCE_EXHAUSTED.
	PushMaxRows  int
	PushMaxBytes int64
	// PushStallTimeout is how long a push query whose buffer is full waits
	// for its client to read before the client is dropped; default
	// DefaultPushStallTimeout.
	PushStallTimeout time.Duration
}

// Server serves the Sluice gRPC API, gRPC health and reflection.
type Server struct {
	eng    Engine
	opts   Options
	log    *slog.Logger
	grpc   *grpc.Server
	health *health.Server

	// shutdown is cancelled when the server stops: running push queries end.
	shutdown context.Context
	cancel   context.CancelFunc
	stopOnce sync.Once

	// onDrop, when set (by tests), is called after a push query's client
	// was dropped.
	onDrop func(queryID string)
}

// New returns a server over eng. Call Serve to start it.
func New(eng Engine, opts Options) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		eng:      eng,
		opts:     opts,
		log:      log,
		grpc:     grpc.NewServer(opts.GRPCOptions...),
		health:   health.NewServer(),
		shutdown: ctx,
		cancel:   cancel,
	}
	sluicev1.RegisterSluiceServer(s.grpc, &service{s: s})
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(sluicev1.Sluice_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s
}

// Serve accepts connections on lis until the server stops. It returns nil
// after GracefulStop, Stop or Shutdown, and the listener's error otherwise.
func (s *Server) Serve(lis net.Listener) error {
	err := s.grpc.Serve(lis)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}

// beginStop marks the server not serving and ends running push queries.
func (s *Server) beginStop() {
	s.stopOnce.Do(func() {
		s.health.Shutdown()
		s.cancel()
	})
}

// GracefulStop stops accepting connections, ends running push queries
// (their clients receive a StreamEnd with END_REASON_SERVER_SHUTDOWN), and
// waits for the other calls in progress to finish.
func (s *Server) GracefulStop() {
	s.beginStop()
	s.grpc.GracefulStop()
}

// Stop closes every connection and listener at once.
func (s *Server) Stop() {
	s.beginStop()
	s.grpc.Stop()
}

// Shutdown stops the server gracefully, and forcibly if ctx ends first, in
// which case it returns ctx.Err().
func (s *Server) Shutdown(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
		return ctx.Err()
	}
}

// service implements sluicev1.SluiceServer.
type service struct {
	sluicev1.UnimplementedSluiceServer
	s *Server
}

// Info implements sluicev1.SluiceServer.
func (svc *service) Info(context.Context, *sluicev1.InfoRequest) (*sluicev1.InfoResponse, error) {
	o := svc.s.opts
	return &sluicev1.InfoResponse{
		Version:               o.Version,
		ServiceId:             o.ServiceID,
		KafkaBootstrapServers: o.KafkaBootstrapServers,
		Playground:            o.Playground,
		SchemaRegistryUrl:     o.SchemaRegistryURL,
	}, nil
}

// Execute implements sluicev1.SluiceServer.
func (svc *service) Execute(req *sluicev1.ExecuteRequest, out grpc.ServerStreamingServer[sluicev1.ExecuteResponse]) error {
	s := svc.s
	ctx := out.Context()
	sess := api.NewSession()
	maps.Copy(sess.Properties, req.GetProperties())
	maps.Copy(sess.Variables, req.GetVariables())

	results, execErr := s.eng.Execute(ctx, sess, req.GetSql())
	defer func() {
		for _, r := range results {
			if r.Stream != nil {
				r.Stream.Close()
			}
		}
	}()

	if err := out.Send(&sluicev1.ExecuteResponse{
		Payload: &sluicev1.ExecuteResponse_Session{Session: &sluicev1.Session{
			Properties: sess.Properties,
			Variables:  sess.Variables,
		}},
	}); err != nil {
		return err
	}

	for i, r := range results {
		if err := s.sendResult(ctx, out, int32(i), r); err != nil {
			return err
		}
	}
	if execErr != nil {
		return s.statusOf(execErr, len(results))
	}
	return nil
}

// sendResult sends one statement's result; for a row stream it forwards
// rows until the stream ends, the client cancels or the server stops.
func (s *Server) sendResult(ctx context.Context, out grpc.ServerStreamingServer[sluicev1.ExecuteResponse], index int32, r api.Result) error {
	resp := &sluicev1.ExecuteResponse{StatementIndex: index, StatementStart: int32(r.Start), StatementEnd: int32(r.End)}
	switch r.Kind {
	case api.ResultStatus:
		resp.Payload = &sluicev1.ExecuteResponse_Message{Message: &sluicev1.MessageResult{
			Statement: wire.ValidUTF8(r.Statement),
			Text:      wire.ValidUTF8(r.Message),
			QueryId:   wire.ValidUTF8(r.QueryID),
			CommandId: wire.ValidUTF8(r.Command),
		}}
		return out.Send(resp)
	case api.ResultEntity:
		resp.Payload = &sluicev1.ExecuteResponse_Entity{Entity: wire.EncodeEntity(r.Statement, r.Entity)}
		return out.Send(resp)
	case api.ResultRows:
		if r.Stream == nil {
			return status.Errorf(codes.Internal, "bug: row stream result without a stream for statement %q", r.Statement)
		}
		return s.forward(ctx, out, index, r)
	default:
		return status.Errorf(codes.Internal, "bug: unknown result kind %d for statement %q", r.Kind, r.Statement)
	}
}

// forward streams a push query's header, rows and end.
func (s *Server) forward(ctx context.Context, out grpc.ServerStreamingServer[sluicev1.ExecuteResponse], index int32, r api.Result) error {
	first := true
	send := func(resp *sluicev1.ExecuteResponse) error {
		resp.StatementIndex = index
		if first {
			resp.StatementStart, resp.StatementEnd, first = int32(r.Start), int32(r.End), false
		}
		return out.Send(resp)
	}
	return s.pushQuery(ctx, r, int(index), 0, pushSink{
		header: func(h *sluicev1.StreamHeader) error {
			return send(&sluicev1.ExecuteResponse{Payload: &sluicev1.ExecuteResponse_StreamHeader{StreamHeader: h}})
		},
		row: func(row *sluicev1.Row) error {
			return send(&sluicev1.ExecuteResponse{Payload: &sluicev1.ExecuteResponse_Row{Row: row}})
		},
		end: func(end *sluicev1.StreamEnd) error {
			return send(&sluicev1.ExecuteResponse{Payload: &sluicev1.ExecuteResponse_StreamEnd{StreamEnd: end}})
		},
	})
}

// statusOf turns an engine error into a gRPC status error with a
// StatementError detail: INVALID_ARGUMENT for a refused statement,
// DEADLINE_EXCEEDED for one the server's statement timeout stopped,
// RESOURCE_EXHAUSTED for a push query beyond ksql.max.push.queries, INTERNAL
// for a server error; a statement whose client went away gets its context's
// status. index is the failing statement's index.
func (s *Server) statusOf(err error, index int) error {
	if _, ok := status.FromError(err); ok && !isStatementError(err) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	detail := &sluicev1.StatementError{StatementIndex: int32(index)}
	code := codes.Internal
	var se *api.StatementError
	if errors.As(err, &se) {
		detail = wire.EncodeError(se, index)
		switch {
		case errors.Is(err, api.ErrStatementTimeout):
			code = codes.DeadlineExceeded
		case errors.Is(err, api.ErrPushQueryLimit):
			code = codes.ResourceExhausted
		case errors.Is(err, api.ErrUnimplemented):
			code = codes.Unimplemented
		case se.Code < api.CodeServerError:
			code = codes.InvalidArgument
		}
	} else {
		detail.Message = wire.ValidUTF8(err.Error())
		detail.Code = api.CodeServerError
	}
	if code == codes.Internal {
		s.log.Error("statement failed with a server error", "statement_index", index, "err", err)
	}
	msg := wire.ValidUTF8(err.Error())
	st, derr := status.New(code, msg).WithDetails(detail)
	if derr != nil {
		return status.Error(code, msg)
	}
	return st.Err()
}

func isStatementError(err error) bool {
	var se *api.StatementError
	return errors.As(err, &se)
}
