package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
)

// Memory is a registry held in memory, optionally kept in a Journal so that
// it survives restarts. It is safe for concurrent use.
//
// Deleting follows Confluent's registry: a delete is soft (the versions
// are hidden but their ids still resolve, and their version numbers are
// not reused) unless it is permanent, which needs a soft delete first.
// Schema ids are never reused.
type Memory struct {
	mu       sync.Mutex
	nextID   int
	byID     map[int]Schema
	subjects map[string][]*version // ascending version numbers
	levels   map[string]string     // per-subject compatibility levels
	global   string                // "" checks nothing (but Compatible)
	journal  Journal
	// skipped are the journal entries OpenMemory did not load.
	skipped []SkippedEntry
	// Compatible, when set, is asked before a new version is added to a
	// subject that already has versions.
	Compatible func(prev []Schema, next Schema) error
}

type version struct {
	Schema
	deleted bool
}

// NewMemory returns an empty in-memory registry. It checks no
// compatibility until a level is set (SetLevel); the Server sets the
// default BACKWARD.
func NewMemory() *Memory {
	return &Memory{nextID: 1, byID: map[int]Schema{}, subjects: map[string][]*version{}, levels: map[string]string{}}
}

func normType(t string) string {
	if t == "" {
		return Avro
	}
	return t
}

// canonical is the text two schemas are compared by: JSON (Avro and JSON
// schemas) without insignificant whitespace.
func canonical(s Schema) string {
	if normType(s.Type) == Protobuf {
		return s.Schema
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s.Schema)); err != nil {
		return s.Schema
	}
	return buf.String()
}

func sameSchema(a, b Schema) bool {
	if normType(a.Type) != normType(b.Type) || len(a.References) != len(b.References) || canonical(a) != canonical(b) {
		return false
	}
	for i := range a.References {
		if a.References[i] != b.References[i] {
			return false
		}
	}
	return true
}

// live returns the versions of a subject that are not deleted.
func (m *Memory) live(subject string) []Schema {
	var out []Schema
	for _, v := range m.subjects[subject] {
		if !v.deleted {
			out = append(out, v.Schema)
		}
	}
	return out
}

// Register implements Client.
func (m *Memory) Register(ctx context.Context, subject string, s Schema) (int, error) {
	got, err := m.RegisterSchema(ctx, subject, s)
	return got.ID, err
}

// RegisterSchema registers s under subject and returns it with its id and
// version. A schema the subject already holds is returned as it is.
func (m *Memory) RegisterSchema(ctx context.Context, subject string, s Schema) (Schema, error) {
	s.Type = normType(s.Type)
	if subject == "" {
		return Schema{}, apiErr(CodeUnprocessableRequest, "The subject name must not be empty.")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.validate(s); err != nil {
		return Schema{}, err
	}
	live := m.live(subject)
	for _, v := range live {
		if sameSchema(v, s) {
			return v, nil
		}
	}
	if len(live) > 0 {
		if m.Compatible != nil {
			if err := m.Compatible(live, s); err != nil {
				return Schema{}, incompatible(subject, []string{err.Error()})
			}
		}
		if msgs := m.check(m.levelOf(subject), live, s); len(msgs) > 0 {
			return Schema{}, incompatible(subject, msgs)
		}
	}
	id, fresh := 0, false
	for _, old := range m.byID { // the same schema under another subject keeps its id
		if sameSchema(old, s) {
			id = old.ID
			break
		}
	}
	if id == 0 {
		id, fresh = m.nextID, true
	}
	next := 1
	if all := m.subjects[subject]; len(all) > 0 {
		next = all[len(all)-1].Version + 1
	}
	s.ID, s.Subject, s.Version = id, subject, next
	if err := m.write(ctx, schemaKey(subject, next), schemaValue(s, false)); err != nil {
		return Schema{}, err
	}
	if fresh {
		m.nextID++
	}
	m.apply(s, false)
	return s, nil
}

func incompatible(subject string, msgs []string) *Error {
	b, _ := json.Marshal(msgs)
	return apiErr(CodeIncompatible, "Schema being registered is incompatible with an earlier schema for subject %q, details: %s", subject, b)
}

// apply adds a schema version to the maps (replacing the same version).
func (m *Memory) apply(s Schema, deleted bool) {
	if _, ok := m.byID[s.ID]; !ok {
		m.byID[s.ID] = s
	}
	if s.ID >= m.nextID {
		m.nextID = s.ID + 1
	}
	vs := m.subjects[s.Subject]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].Version >= s.Version })
	if i < len(vs) && vs[i].Version == s.Version {
		vs[i] = &version{s, deleted}
		return
	}
	m.subjects[s.Subject] = slices.Insert(vs, i, &version{s, deleted})
}

// ByID implements Client.
func (m *Memory) ByID(_ context.Context, id int) (Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	if !ok {
		return Schema{}, apiErr(CodeSchemaNotFound, "Schema %d not found", id)
	}
	return s, nil
}

// SubjectVersion names one version of a subject.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// VersionsOfID returns the subject versions that hold the schema with id.
func (m *Memory) VersionsOfID(_ context.Context, id int, deleted bool) ([]SubjectVersion, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.byID[id]; !ok {
		return nil, apiErr(CodeSchemaNotFound, "Schema %d not found", id)
	}
	out := []SubjectVersion{}
	for _, subj := range slices.Sorted(maps.Keys(m.subjects)) {
		for _, v := range m.subjects[subj] {
			if v.ID == id && (deleted || !v.deleted) {
				out = append(out, SubjectVersion{subj, v.Version})
			}
		}
	}
	return out, nil
}

// ReferencedBy returns the ids of the schemas that reference a version.
func (m *Memory) ReferencedBy(_ context.Context, subject string, version int) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.find(subject, version, false); err != nil {
		return nil, err
	}
	out := []int{}
	for _, id := range slices.Sorted(maps.Keys(m.byID)) {
		for _, r := range m.byID[id].References {
			if r.Subject == subject && r.Version == version {
				out = append(out, id)
				break
			}
		}
	}
	return out, nil
}

// find returns a version of a subject; -1 is the latest.
func (m *Memory) find(subject string, v int, deleted bool) (*version, error) {
	vs, ok := m.subjects[subject]
	if !ok {
		return nil, subjectNotFound(subject)
	}
	if v == -1 {
		for i := len(vs) - 1; i >= 0; i-- {
			if deleted || !vs[i].deleted {
				return vs[i], nil
			}
		}
		return nil, subjectNotFound(subject)
	}
	for _, x := range vs {
		if x.Version == v && (deleted || !x.deleted) {
			return x, nil
		}
	}
	return nil, versionNotFound(v)
}

// Latest implements Client.
func (m *Memory) Latest(ctx context.Context, subject string) (Schema, error) {
	return m.Version(ctx, subject, -1)
}

// Version implements Client; version -1 is the latest.
func (m *Memory) Version(ctx context.Context, subject string, version int) (Schema, error) {
	return m.VersionDeleted(ctx, subject, version, false)
}

// VersionDeleted is Version that, with deleted, also finds soft-deleted
// versions.
func (m *Memory) VersionDeleted(_ context.Context, subject string, version int, deleted bool) (Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, err := m.find(subject, version, deleted)
	if err != nil {
		return Schema{}, err
	}
	return v.Schema, nil
}

// Lookup returns the version of subject that holds s.
func (m *Memory) Lookup(_ context.Context, subject string, s Schema, deleted bool) (Schema, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs, ok := m.subjects[subject]
	if !ok || (!deleted && len(m.live(subject)) == 0) {
		return Schema{}, subjectNotFound(subject)
	}
	for _, v := range vs {
		if (deleted || !v.deleted) && sameSchema(v.Schema, s) {
			return v.Schema, nil
		}
	}
	return Schema{}, apiErr(CodeSchemaNotFound, "Schema not found")
}

// Subjects implements Client.
func (m *Memory) Subjects(ctx context.Context) ([]string, error) {
	return m.SubjectsDeleted(ctx, false)
}

// SubjectsDeleted lists the subjects, with deleted also those whose
// versions are all soft-deleted.
func (m *Memory) SubjectsDeleted(_ context.Context, deleted bool) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []string{}
	for s := range m.subjects {
		if deleted || len(m.live(s)) > 0 {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Versions lists the version numbers of a subject.
func (m *Memory) Versions(_ context.Context, subject string, deleted bool) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs, ok := m.subjects[subject]
	out := []int{}
	for _, v := range vs {
		if deleted || !v.deleted {
			out = append(out, v.Version)
		}
	}
	if !ok || len(out) == 0 {
		return nil, subjectNotFound(subject)
	}
	return out, nil
}

// DeleteSubject implements Client: a soft delete.
func (m *Memory) DeleteSubject(ctx context.Context, subject string) ([]int, error) {
	return m.DeleteSubjectPermanent(ctx, subject, false)
}

// DeleteSubjectPermanent deletes a subject's versions: softly, or, with
// permanent, for good (after a soft delete).
func (m *Memory) DeleteSubjectPermanent(ctx context.Context, subject string, permanent bool) ([]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs, ok := m.subjects[subject]
	if !ok {
		return nil, subjectNotFound(subject)
	}
	live := m.live(subject)
	if !permanent && len(live) == 0 {
		return nil, apiErr(CodeSubjectSoftDeleted, "Subject '%s' was soft deleted.Set permanent=true to delete permanently", subject)
	}
	if permanent && len(live) > 0 {
		return nil, apiErr(CodeSubjectNotSoftDeleted, "Subject '%s' was not deleted first before being permanently deleted", subject)
	}
	out := []int{}
	for _, v := range slices.Clone(vs) {
		if permanent {
			if err := m.purge(ctx, v); err != nil {
				return out, err
			}
		} else {
			if err := m.write(ctx, schemaKey(subject, v.Version), schemaValue(v.Schema, true)); err != nil {
				return out, err
			}
			v.deleted = true
		}
		out = append(out, v.Version)
	}
	if permanent {
		if err := m.write(ctx, configKey(subject), nil); err != nil {
			return out, err
		}
		delete(m.levels, subject)
	}
	return out, nil
}

// DeleteVersion deletes one version (-1: the latest) of a subject, softly
// or, with permanent, for good (after a soft delete).
func (m *Memory) DeleteVersion(ctx context.Context, subject string, version int, permanent bool) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, err := m.find(subject, version, permanent)
	if err != nil {
		if e := asAPIError(err); !permanent && e.Code == CodeVersionNotFound {
			if x, err2 := m.find(subject, version, true); err2 == nil && x.deleted {
				return 0, apiErr(CodeVersionSoftDeleted, "Subject '%s' Version %d was soft deleted.Set permanent=true to delete permanently", subject, version)
			}
		}
		return 0, err
	}
	if !permanent {
		if err := m.write(ctx, schemaKey(subject, v.Version), schemaValue(v.Schema, true)); err != nil {
			return 0, err
		}
		v.deleted = true
		return v.Version, nil
	}
	if !v.deleted {
		return 0, apiErr(CodeVersionNotSoftDeleted, "Subject '%s' Version %d was not deleted first before being permanently deleted", subject, v.Version)
	}
	return v.Version, m.purge(ctx, v)
}

// purge removes a version for good. Its id is not reused: the id counter
// is journaled first.
func (m *Memory) purge(ctx context.Context, v *version) error {
	if err := m.write(ctx, counterKey(), counterValue(m.nextID)); err != nil {
		return err
	}
	if err := m.write(ctx, schemaKey(v.Subject, v.Version), nil); err != nil {
		return err
	}
	m.remove(v.Subject, v.Version)
	return nil
}

func (m *Memory) remove(subject string, ver int) {
	vs := m.subjects[subject]
	var id int
	for i, v := range vs {
		if v.Version == ver {
			id = v.ID
			vs = slices.Delete(vs, i, i+1)
			break
		}
	}
	if len(vs) == 0 {
		delete(m.subjects, subject)
	} else {
		m.subjects[subject] = vs
	}
	if id == 0 {
		return
	}
	for _, vs := range m.subjects { // the id lives on while a version holds it
		for _, v := range vs {
			if v.ID == id {
				m.byID[id] = v.Schema
				return
			}
		}
	}
	delete(m.byID, id)
}

func (m *Memory) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Sprintf("registry.Memory(%d subjects, %d schemas)", len(m.subjects), len(m.byID))
}
