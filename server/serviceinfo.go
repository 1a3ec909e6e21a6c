package server

import "google.golang.org/grpc"

// ServiceInfo returns the gRPC services the server serves, with their
// methods, as grpc.Server.GetServiceInfo does: tests enumerate them to
// check every method is protected.
func (s *Server) ServiceInfo() map[string]grpc.ServiceInfo { return s.grpc.GetServiceInfo() }
