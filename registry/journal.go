package registry

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
)

// A Journal keeps a Memory's changes so that a registry restarted on it
// has its schemas, versions, levels and id counter back. Entries are
// key/value pairs like the records of Confluent's compacted _schemas
// topic: a later entry with the same key replaces an earlier one, and a
// nil value deletes the key.
type Journal interface {
	// Load returns the entries written so far, oldest first.
	Load(ctx context.Context) ([]Entry, error)
	// Append writes an entry durably.
	Append(ctx context.Context, e Entry) error
}

// Entry is one change of a registry.
type Entry struct {
	Key   []byte `json:"k"`
	Value []byte `json:"v"`
	// Offset locates the entry in its journal (a record's offset, a
	// line's number), for the errors that name a bad one.
	Offset int64 `json:"-"`
}

// SkippedEntry is a journal entry OpenMemory did not load: it could not
// be read, or it holds what the registry refuses.
type SkippedEntry struct {
	// Offset is the entry's Offset.
	Offset int64
	// Key is the entry's key as written (cut to 200 bytes).
	Key string
	// Reason says why it was skipped.
	Reason string
}

type entryKey struct {
	KeyType string `json:"keytype"`
	Subject string `json:"subject,omitempty"`
	Version int    `json:"version,omitempty"`
	Magic   int    `json:"magic"`
}

type entryValue struct {
	Subject    string      `json:"subject,omitempty"`
	Version    int         `json:"version,omitempty"`
	ID         int         `json:"id,omitempty"`
	Type       string      `json:"schemaType,omitempty"`
	Schema     string      `json:"schema,omitempty"`
	References []Reference `json:"references,omitempty"`
	Deleted    bool        `json:"deleted,omitempty"`
	Level      string      `json:"compatibilityLevel,omitempty"`
	Next       int         `json:"next,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func schemaKey(subject string, version int) []byte {
	return mustJSON(entryKey{KeyType: "SCHEMA", Subject: subject, Version: version, Magic: 1})
}

func schemaValue(s Schema, deleted bool) []byte {
	return mustJSON(entryValue{Subject: s.Subject, Version: s.Version, ID: s.ID, Type: s.Type, Schema: s.Schema, References: s.References, Deleted: deleted})
}

func configKey(subject string) []byte {
	return mustJSON(entryKey{KeyType: "CONFIG", Subject: subject})
}

func configValue(level string) []byte { return mustJSON(entryValue{Level: level}) }

func counterKey() []byte { return mustJSON(entryKey{KeyType: "ID_COUNTER"}) }

func counterValue(next int) []byte { return mustJSON(entryValue{Next: next}) }

// write journals one change; the caller holds m.mu and applies the change
// only when write succeeds.
func (m *Memory) write(ctx context.Context, key, value []byte) error {
	if m.journal == nil {
		return nil
	}
	if err := m.journal.Append(ctx, Entry{Key: key, Value: value}); err != nil {
		return &Error{Code: CodeStore, Message: "Error while writing the schema registry's journal: " + err.Error()}
	}
	return nil
}

// OpenMemory returns a registry that keeps its changes in j, with what j
// already holds loaded. An entry that cannot be read, or that holds what
// the registry refuses (a schema that does not parse, an id that names
// another schema), is skipped and listed by the registry's Skipped: one
// bad record never stops a start, and the journal is never rewritten.
func OpenMemory(ctx context.Context, j Journal) (*Memory, error) {
	m := NewMemory()
	entries, err := j.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema registry: loading the journal: %w", err)
	}
	type latest struct {
		value  []byte
		offset int64
	}
	last := map[string]latest{}
	var order []string
	for _, e := range entries {
		k := string(e.Key)
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = latest{e.Value, e.Offset}
	}
	type ver struct {
		s       Schema
		deleted bool
		offset  int64
		key     string
	}
	var vers []ver
	for _, k := range order {
		v := last[k]
		if v.value == nil {
			continue
		}
		var key entryKey
		var val entryValue
		if err := json.Unmarshal([]byte(k), &key); err != nil {
			m.skip(v.offset, k, fmt.Sprintf("the key is not a registry key: %v", err))
			continue
		}
		if err := json.Unmarshal(v.value, &val); err != nil {
			m.skip(v.offset, k, fmt.Sprintf("the value is not a registry value: %v", err))
			continue
		}
		switch key.KeyType {
		case "SCHEMA":
			if key.Subject == "" || key.Version < 1 || val.ID < 1 {
				m.skip(v.offset, k, "a schema entry without a subject, a version and an id")
				continue
			}
			vers = append(vers, ver{Schema{ID: val.ID, Subject: key.Subject, Version: key.Version, Type: normType(val.Type), Schema: val.Schema, References: val.References}, val.Deleted, v.offset, k})
		case "CONFIG":
			if val.Level != "" && !ValidLevel(val.Level) {
				m.skip(v.offset, k, fmt.Sprintf("unknown compatibility level %q", val.Level))
				continue
			}
			if key.Subject == "" {
				m.global = val.Level
			} else {
				m.levels[key.Subject] = val.Level
			}
		case "ID_COUNTER":
			m.nextID = max(m.nextID, val.Next)
		case "NOOP":
			// Confluent's registry writes these to find the end of the
			// topic; they change nothing.
		default:
			m.skip(v.offset, k, fmt.Sprintf("unknown key type %q", key.KeyType))
		}
	}
	// Ids keep the subject and version they were first registered under.
	sort.SliceStable(vers, func(i, j int) bool { return vers[i].s.ID < vers[j].s.ID })
	for _, v := range vers {
		if old, ok := m.byID[v.s.ID]; ok && !sameSchema(old, v.s) {
			m.skip(v.offset, v.key, fmt.Sprintf("id %d names another schema already (%s version %d)", v.s.ID, old.Subject, old.Version))
			continue
		}
		if err := m.validateRefs(v.s, true); err != nil {
			m.skip(v.offset, v.key, asAPIError(err).Message)
			continue
		}
		m.apply(v.s, v.deleted)
	}
	m.journal = j
	return m, nil
}

// skip notes a journal entry OpenMemory did not load.
func (m *Memory) skip(offset int64, key, reason string) {
	if len(key) > 200 {
		key = key[:200]
	}
	m.skipped = append(m.skipped, SkippedEntry{Offset: offset, Key: key, Reason: reason})
}

// Skipped returns the journal entries OpenMemory skipped, in the order it
// met them.
func (m *Memory) Skipped() []SkippedEntry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]SkippedEntry(nil), m.skipped...)
}

// FileJournal is a Journal in a file of JSON lines, for a registry that has
// no Kafka topic to keep its changes in.
type FileJournal struct {
	Path string
	mu   sync.Mutex
}

// Load implements Journal. A missing file is an empty journal; a torn
// last line (a crash while appending) is ignored.
func (f *FileJournal) Load(context.Context) ([]Entry, error) {
	file, err := os.Open(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	var out []Entry
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for line := int64(1); sc.Scan(); line++ {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			break
		}
		e.Offset = line
		out = append(out, e)
	}
	return out, sc.Err()
}

// Append implements Journal.
func (f *FileJournal) Append(_ context.Context, e Entry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	file, err := os.OpenFile(f.Path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b := append(mustJSON(e), '\n')
	if _, err := file.Write(b); err != nil {
		file.Close()
		return err
	}
	if err := file.Sync(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
