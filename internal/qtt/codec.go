package qtt

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/exec"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/registry"
)

// rawText is an actual key or value the runner cannot decode with a codec
// (a format the engine does not read yet, or bytes the codec refuses): it
// is compared as text.
type rawText string

// serde writes input records and reads output records of one topic, with
// the engine's own codecs for the source declared over the topic. Without
// a source, or where a codec is missing, keys and values are text: a JSON
// string is written as its contents, anything else as its JSON text.
type serde struct {
	keyFormat, valueFormat string
	// key and value are the source's codecs; keyJSON and valueJSON are
	// JSON codecs over the same columns, which translate between the
	// corpus's JSON and rows. Any may be nil.
	key, keyJSON, value, valueJSON format.Codec
	nKey, nValue                   int
	shape                          Shape
	// window is the windowing of the source's keys, or nil.
	window *topology.KeyWindow
}

// newSerde returns the serde of src; a nil src gives a text serde.
func newSerde(src *catalog.Source, reg registry.Client) *serde {
	s := &serde{}
	if src == nil {
		return s
	}
	s.window = src.Window
	s.keyFormat = strings.ToUpper(src.KeyFormat)
	s.valueFormat = strings.ToUpper(src.ValueFormat)
	s.nKey, s.nValue = len(src.Key), len(src.Value)
	sr := format.SR{Registry: reg, Topic: src.Topic}
	s.key, _ = format.NewKeyCodecSR(src.KeyFormat, src.Key, src.KeyProps, sr)
	s.keyJSON, _ = format.NewKeyCodec(format.JSON, src.Key)
	wrappedKey := s.keyFormat == format.Protobuf || s.keyFormat == format.ProtobufNoSR
	if wrappedKey { // a PROTOBUF key is a message: an object in the corpus
		s.keyJSON, _ = format.NewValueCodec(format.JSON, src.Key, nil)
	}
	s.value, _ = format.NewValueCodecSR(src.ValueFormat, src.Value, src.ValueProps, sr)
	unwrapped := false
	if v, ok := src.ValueProps[format.WrapSingleValue]; ok && strings.EqualFold(strings.Trim(strings.TrimSpace(v), "'"), "false") {
		unwrapped = true
	}
	if s.valueFormat == format.Kafka {
		unwrapped = true
	}
	if unwrapped && len(src.Value) == 1 {
		s.valueJSON, _ = format.NewValueCodec(format.JSON, src.Value, map[string]string{format.WrapSingleValue: "false"})
		s.shape.Value = src.Value[0].Type
	} else {
		s.valueJSON, _ = format.NewValueCodec(format.JSON, src.Value, nil)
		s.shape.Value = structOf(src.Value)
	}
	switch len(src.Key) {
	case 0:
	case 1:
		s.shape.Key = src.Key[0].Type
		if wrappedKey {
			s.shape.Key = structOf(src.Key)
		}
	default:
		s.shape.Key = structOf(src.Key)
	}
	return s
}

func structOf(cols []types.Column) *types.Type {
	fs := make([]types.Field, len(cols))
	for i, c := range cols {
		fs[i] = types.Field(c)
	}
	return types.StructOf(fs...)
}

// isNull reports whether raw JSON is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// encodeKey returns the bytes of an input record's key, with its window
// when the source's keys are windowed.
func (s *serde) encodeKey(raw json.RawMessage, w *Window) []byte {
	var key []byte
	if !isNull(raw) {
		key = s.encode(raw, s.keyFormat, s.key, s.keyJSON, s.nKey)
	}
	if s.window != nil && w != nil {
		key = exec.AppendWindow(append([]byte{}, key...), s.window, w.Start, w.End)
	}
	return key
}

// encodeValue returns the bytes of an input record's value; nil is a
// tombstone.
func (s *serde) encodeValue(raw json.RawMessage) []byte {
	if isNull(raw) {
		return nil
	}
	return s.encode(raw, s.valueFormat, s.value, s.valueJSON, s.nValue)
}

func (s *serde) encode(raw json.RawMessage, fmtName string, c, viaJSON format.Codec, n int) []byte {
	switch fmtName {
	case format.JSON:
		var b bytes.Buffer
		if json.Compact(&b, raw) == nil {
			return b.Bytes()
		}
		return raw
	case format.Kafka, format.Avro, format.JSONSR, format.Protobuf, format.ProtobufNoSR:
		if c != nil && viaJSON != nil {
			row := make([]any, n)
			if viaJSON.Decode(raw, row) == nil {
				if out, err := c.Encode(nil, row); err == nil {
					return out
				}
			}
		}
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return []byte(str)
	}
	return bytes.TrimSpace(raw)
}

// decodeKey turns an output record's key into a generic JSON value and,
// when the source's keys are windowed, its window.
func (s *serde) decodeKey(b []byte) (any, *Window) {
	if s.window == nil || b == nil {
		return s.decode(b, s.keyFormat, s.key, s.keyJSON, s.nKey), nil
	}
	start, end, rest, err := exec.SplitWindowedKey(b, s.window)
	if err != nil {
		return rawText(b), nil
	}
	w := &Window{Start: start, End: end, Type: "time"}
	if s.window.Type == topology.Session {
		w.Type = "session"
	}
	if len(rest) == 0 {
		return nil, w
	}
	return s.decode(rest, s.keyFormat, s.key, s.keyJSON, s.nKey), w
}

// decodeValue turns an output record's value into a generic JSON value.
func (s *serde) decodeValue(b []byte) any {
	return s.decode(b, s.valueFormat, s.value, s.valueJSON, s.nValue)
}

func (s *serde) decode(b []byte, fmtName string, c, viaJSON format.Codec, n int) any {
	if b == nil {
		return nil
	}
	switch fmtName {
	case format.JSON:
		if v, err := decodeJSON(b); err == nil {
			return v
		}
	case format.Kafka, format.Avro, format.JSONSR, format.Protobuf, format.ProtobufNoSR:
		if c != nil && viaJSON != nil {
			row := make([]any, n)
			if c.Decode(b, row) == nil {
				if js, err := viaJSON.Encode(nil, row); err == nil {
					if v, err := decodeJSON(js); err == nil {
						return v
					}
				}
			}
		}
	case "":
		if v, err := decodeJSON(b); err == nil {
			return v
		}
	}
	return rawText(b)
}
