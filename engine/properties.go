package engine

import (
	"fmt"
	"strings"

	"github.com/sluice-sql/sluice/parser/ast"
)

const propOffsetReset = "auto.offset.reset"

// settable lists the properties SET accepts, with a check of the value.
var settable = map[string]func(string) error{
	propOffsetReset: func(v string) error {
		switch v {
		case "earliest", "latest":
			return nil
		}
		return fmt.Errorf("'%s' takes 'earliest' or 'latest', not '%s'", propOffsetReset, v)
	},
}

func setProperty(s *Session, st *ast.SetProperty) (Result, error) {
	check, ok := settable[st.Name]
	if !ok {
		return Result{}, userError(st.Pos, "unknown property '%s'; settable properties: %s", st.Name, settableNames())
	}
	v := strings.TrimSpace(st.Value)
	if err := check(v); err != nil {
		return Result{}, userError(st.Pos, "%v", err)
	}
	s.Properties[st.Name] = v
	return Result{Kind: ResultMessage, Message: fmt.Sprintf("Successfully changed local property '%s' to '%s'. Use the UNSET command to revert your change.", st.Name, v)}, nil
}

func unsetProperty(s *Session, st *ast.UnsetProperty) (Result, error) {
	if _, ok := settable[st.Name]; !ok {
		return Result{}, userError(st.Pos, "unknown property '%s'; settable properties: %s", st.Name, settableNames())
	}
	delete(s.Properties, st.Name)
	return Result{Kind: ResultMessage, Message: fmt.Sprintf("Successfully unset local property '%s'.", st.Name)}, nil
}

func settableNames() string {
	names := make([]string, 0, len(settable))
	for k := range settable {
		names = append(names, "'"+k+"'")
	}
	return strings.Join(names, ", ")
}

// offsetReset is where new queries of the session start reading.
func (s *Session) offsetReset() string {
	if v := s.Properties[propOffsetReset]; v != "" {
		return v
	}
	return "latest"
}

// variable looks a session variable up by its upper-cased name.
func (s *Session) variable(name string) (string, bool) {
	v, ok := s.Variables[strings.ToUpper(name)]
	return v, ok
}

func define(s *Session, st *ast.Define) (Result, error) {
	if s.Variables == nil {
		s.Variables = map[string]string{}
	}
	s.Variables[strings.ToUpper(st.Name)] = st.Value
	return Result{Kind: ResultMessage}, nil
}

func undefine(s *Session, st *ast.Undefine) (Result, error) {
	name := strings.ToUpper(st.Name)
	if _, ok := s.Variables[name]; !ok {
		return Result{Kind: ResultMessage, Message: fmt.Sprintf("Cannot undefine variable '%s' which was never defined.", st.Name)}, nil
	}
	delete(s.Variables, name)
	return Result{Kind: ResultMessage}, nil
}
