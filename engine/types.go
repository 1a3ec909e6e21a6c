package engine

import (
	"context"
	"fmt"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner"
)

func (e *Engine) createType(ctx context.Context, st *ast.CreateType) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	if old, ok := e.cat.Type(st.Name); ok {
		if st.IfNotExists {
			return Result{Kind: ResultStatus, Message: fmt.Sprintf("%s is already registered with type %s", st.Name, old)}, nil
		}
		return Result{}, userError(st.Pos, "cannot register custom type %s: it is already registered as %s; DROP TYPE %s first", st.Name, old, st.Name)
	}
	t, err := types.Resolve(st.Type, e.cat.Type)
	if err != nil {
		return Result{}, userError(st.Pos, "%v", err)
	}
	if _, err := commit(ctx); err != nil {
		return Result{}, err
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.CreateType, TypeName: st.Name, Type: t}); err != nil {
		return Result{}, &internalError{err}
	}
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Registered custom type with name '%s' and SQL type %s", st.Name, t)}, nil
}

func (e *Engine) dropType(ctx context.Context, st *ast.DropType) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	if _, ok := e.cat.Type(st.Name); !ok {
		if st.IfExists {
			return Result{Kind: ResultStatus, Message: fmt.Sprintf("Type '%s' does not exist", st.Name)}, nil
		}
		return Result{}, userError(st.Pos, "Type '%s' does not exist\nSHOW TYPES lists the custom types; DROP TYPE IF EXISTS does nothing when there is none.", st.Name)
	}
	if _, err := commit(ctx); err != nil {
		return Result{}, err
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.DropType, TypeName: st.Name}); err != nil {
		return Result{}, &internalError{err}
	}
	return Result{Kind: ResultStatus, Message: fmt.Sprintf("Dropped type '%s'", st.Name)}, nil
}

func (e *Engine) alterSource(ctx context.Context, st *ast.AlterSource) (Result, error) {
	if err := e.ddl.LockContext(ctx); err != nil {
		return Result{}, err
	}
	defer e.ddl.Unlock()
	if old, ok := e.cat.Source(st.Name); ok && old.System {
		return Result{}, systemSourceError(st.Pos, st.Name, "alter")
	}
	src, err := planner.PlanAlter(e.cat, st)
	if err != nil {
		return Result{}, err
	}
	if _, err := commit(ctx); err != nil {
		return Result{}, err
	}
	if err := e.write(ctx, &catalog.Command{Kind: catalog.CreateSource, Source: src, Replace: true}); err != nil {
		return Result{}, &internalError{err}
	}
	word := "Stream"
	if src.Kind == catalog.Table {
		word = "Table"
	}
	return Result{Kind: ResultStatus, Message: word + " " + src.Name + " altered"}, nil
}
