package api

import "strings"

// Session holds a client's session-local state: properties set with SET and
// variables set with DEFINE. The engine reads and changes it as statements
// run. A Session is used by one caller at a time.
type Session struct {
	Properties map[string]string
	Variables  map[string]string
}

// NewSession returns an empty session.
func NewSession() *Session {
	return &Session{Properties: map[string]string{}, Variables: map[string]string{}}
}

// Variable looks a session variable up by its upper-cased name.
func (s *Session) Variable(name string) (string, bool) {
	v, ok := s.Variables[strings.ToUpper(name)]
	return v, ok
}
