package registry

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// ContentType is the media type of the registry's requests and answers.
const ContentType = "application/vnd.schemaregistry.v1+json"

// Server serves Confluent Schema Registry's REST API over a Memory.
type Server struct {
	m   *Memory
	mux *http.ServeMux
}

// NewServer returns a handler serving m. A Memory with no global
// compatibility level gets Confluent's default, BACKWARD.
func NewServer(m *Memory) *Server {
	m.mu.Lock()
	if m.global == "" {
		m.global = Backward
	}
	m.mu.Unlock()
	s := &Server{m: m, mux: http.NewServeMux()}
	h := s.mux.HandleFunc
	h("GET /{$}", func(w http.ResponseWriter, r *http.Request) { reply(w, map[string]any{}) })
	h("GET /subjects", s.subjects)
	h("GET /subjects/{subject}/versions", s.versions)
	h("POST /subjects/{subject}/versions", s.register)
	h("GET /subjects/{subject}/versions/{version}", s.version)
	h("GET /subjects/{subject}/versions/{version}/schema", s.versionSchema)
	h("GET /subjects/{subject}/versions/{version}/referencedby", s.referencedBy)
	h("POST /subjects/{subject}", s.lookup)
	h("DELETE /subjects/{subject}", s.deleteSubject)
	h("DELETE /subjects/{subject}/versions/{version}", s.deleteVersion)
	h("GET /schemas/ids/{id}", s.byID)
	h("GET /schemas/ids/{id}/schema", s.byIDSchema)
	h("GET /schemas/ids/{id}/versions", s.byIDVersions)
	h("GET /schemas/types", func(w http.ResponseWriter, r *http.Request) { reply(w, []string{JSON, Protobuf, Avro}) })
	h("GET /config", s.getConfig)
	h("PUT /config", s.putConfig)
	h("GET /config/{subject}", s.getConfig)
	h("PUT /config/{subject}", s.putConfig)
	h("DELETE /config/{subject}", s.deleteConfig)
	h("POST /compatibility/subjects/{subject}/versions/{version}", s.compatibility)
	h("POST /compatibility/subjects/{subject}/versions", s.compatibility)
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost || r.Method == http.MethodPut {
		if ct := r.Header.Get("Content-Type"); ct != "" {
			mt, _, _ := mime.ParseMediaType(ct)
			switch mt {
			case ContentType, "application/vnd.schemaregistry+json", "application/json", "application/octet-stream":
			default:
				fail(w, apiErr(CodeUnsupportedMediaType, "Unsupported media type %q: send %s or application/json", mt, ContentType))
				return
			}
		}
	}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		fail(w, apiErr(CodeMethodOrPathNotAllowed, "HTTP %d Not Found: %s %s is not an endpoint of the schema registry", http.StatusNotFound, r.Method, r.URL.Path))
		return
	}
	s.mux.ServeHTTP(w, r)
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", ContentType)
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	e := asAPIError(err)
	w.Header().Set("Content-Type", ContentType)
	w.WriteHeader(e.Status())
	_ = json.NewEncoder(w).Encode(e)
}

func flag(r *http.Request, name string) bool {
	v, _ := strconv.ParseBool(r.URL.Query().Get(name))
	return v
}

// versionArg parses a version: a positive number or "latest" (-1).
func versionArg(r *http.Request) (int, error) {
	v := r.PathValue("version")
	if v == "latest" || v == "-1" {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, apiErr(CodeInvalidVersion, "The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
	}
	return n, nil
}

func idArg(r *http.Request) (int, error) {
	n, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		return 0, apiErr(CodeSchemaNotFound, "Schema %s not found", r.PathValue("id"))
	}
	return n, nil
}

// request is the body of register, lookup and compatibility requests.
type request struct {
	Schema     string      `json:"schema"`
	Type       string      `json:"schemaType"`
	References []Reference `json:"references"`
}

func readSchema(r *http.Request) (Schema, error) {
	var req request
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return Schema{}, err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return Schema{}, apiErr(CodeUnprocessableRequest, "Unrecognized request body: %v", err)
	}
	if req.Schema == "" {
		return Schema{}, apiErr(CodeInvalidSchema, "Empty schema")
	}
	return Schema{Type: normType(strings.ToUpper(req.Type)), Schema: req.Schema, References: req.References}, nil
}

// schemaJSON is how the API shows a schema: schemaType only when it is not
// AVRO, references only when there are some.
func schemaJSON(s Schema, withSubject bool) map[string]any {
	out := map[string]any{"id": s.ID, "schema": s.Schema}
	if withSubject {
		out["subject"], out["version"] = s.Subject, s.Version
	}
	if normType(s.Type) != Avro {
		out["schemaType"] = s.Type
	}
	if len(s.References) > 0 {
		out["references"] = s.References
	}
	return out
}

func (s *Server) subjects(w http.ResponseWriter, r *http.Request) {
	out, err := s.m.SubjectsDeleted(r.Context(), flag(r, "deleted"))
	if err != nil {
		fail(w, err)
		return
	}
	if p := r.URL.Query().Get("subjectPrefix"); p != "" && p != ":*:" {
		kept := out[:0]
		for _, x := range out {
			if strings.HasPrefix(x, p) {
				kept = append(kept, x)
			}
		}
		out = kept
	}
	reply(w, out)
}

func (s *Server) versions(w http.ResponseWriter, r *http.Request) {
	out, err := s.m.Versions(r.Context(), r.PathValue("subject"), flag(r, "deleted"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, out)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	sch, err := readSchema(r)
	if err != nil {
		fail(w, err)
		return
	}
	got, err := s.m.RegisterSchema(r.Context(), r.PathValue("subject"), sch)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]int{"id": got.ID})
}

func (s *Server) getVersion(w http.ResponseWriter, r *http.Request) (Schema, bool) {
	v, err := versionArg(r)
	if err != nil {
		fail(w, err)
		return Schema{}, false
	}
	sch, err := s.m.VersionDeleted(r.Context(), r.PathValue("subject"), v, flag(r, "deleted"))
	if err != nil {
		fail(w, err)
		return Schema{}, false
	}
	return sch, true
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	if sch, ok := s.getVersion(w, r); ok {
		reply(w, schemaJSON(sch, true))
	}
}

func (s *Server) versionSchema(w http.ResponseWriter, r *http.Request) {
	if sch, ok := s.getVersion(w, r); ok {
		w.Header().Set("Content-Type", ContentType)
		_, _ = io.WriteString(w, sch.Schema)
	}
}

func (s *Server) referencedBy(w http.ResponseWriter, r *http.Request) {
	sch, ok := s.getVersion(w, r)
	if !ok {
		return
	}
	ids, err := s.m.ReferencedBy(r.Context(), sch.Subject, sch.Version)
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, ids)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	sch, err := readSchema(r)
	if err != nil {
		fail(w, err)
		return
	}
	got, err := s.m.Lookup(r.Context(), r.PathValue("subject"), sch, flag(r, "deleted"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, schemaJSON(got, true))
}

func (s *Server) deleteSubject(w http.ResponseWriter, r *http.Request) {
	out, err := s.m.DeleteSubjectPermanent(r.Context(), r.PathValue("subject"), flag(r, "permanent"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, out)
}

func (s *Server) deleteVersion(w http.ResponseWriter, r *http.Request) {
	v, err := versionArg(r)
	if err != nil {
		fail(w, err)
		return
	}
	out, err := s.m.DeleteVersion(r.Context(), r.PathValue("subject"), v, flag(r, "permanent"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, out)
}

func (s *Server) schemaByID(w http.ResponseWriter, r *http.Request) (Schema, bool) {
	id, err := idArg(r)
	if err != nil {
		fail(w, err)
		return Schema{}, false
	}
	sch, err := s.m.ByID(r.Context(), id)
	if err != nil {
		fail(w, err)
		return Schema{}, false
	}
	return sch, true
}

func (s *Server) byID(w http.ResponseWriter, r *http.Request) {
	if sch, ok := s.schemaByID(w, r); ok {
		out := schemaJSON(sch, false)
		delete(out, "id")
		reply(w, out)
	}
}

func (s *Server) byIDSchema(w http.ResponseWriter, r *http.Request) {
	if sch, ok := s.schemaByID(w, r); ok {
		w.Header().Set("Content-Type", ContentType)
		_, _ = io.WriteString(w, sch.Schema)
	}
}

func (s *Server) byIDVersions(w http.ResponseWriter, r *http.Request) {
	id, err := idArg(r)
	if err != nil {
		fail(w, err)
		return
	}
	out, err := s.m.VersionsOfID(r.Context(), id, flag(r, "deleted"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, out)
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	l, err := s.m.Level(r.Context(), r.PathValue("subject"), flag(r, "defaultToGlobal"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]string{"compatibilityLevel": l})
}

func (s *Server) putConfig(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Compatibility string `json:"compatibility"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		fail(w, apiErr(CodeUnprocessableRequest, "Unrecognized request body: %v", err))
		return
	}
	level := strings.ToUpper(req.Compatibility)
	if err := s.m.SetLevel(r.Context(), r.PathValue("subject"), level); err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]string{"compatibility": level})
}

func (s *Server) deleteConfig(w http.ResponseWriter, r *http.Request) {
	l, err := s.m.DeleteLevel(r.Context(), r.PathValue("subject"))
	if err != nil {
		fail(w, err)
		return
	}
	reply(w, map[string]string{"compatibilityLevel": l})
}

func (s *Server) compatibility(w http.ResponseWriter, r *http.Request) {
	v := -1
	if r.PathValue("version") != "" {
		var err error
		if v, err = versionArg(r); err != nil {
			fail(w, err)
			return
		}
	}
	sch, err := readSchema(r)
	if err != nil {
		fail(w, err)
		return
	}
	msgs, err := s.m.TestCompatibility(r.Context(), r.PathValue("subject"), v, sch)
	if err != nil {
		fail(w, err)
		return
	}
	out := map[string]any{"is_compatible": len(msgs) == 0}
	if flag(r, "verbose") {
		if msgs == nil {
			msgs = []string{}
		}
		out["messages"] = msgs
	}
	reply(w, out)
}
