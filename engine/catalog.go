package engine

import "github.com/sluice-sql/sluice/catalog"

// Catalog returns the engine's catalog of sources, queries and types, for
// read-only inspection (the conformance runner checks post-conditions on
// it). Callers must not apply commands to it: statements change it through
// Execute.
func (e *Engine) Catalog() *catalog.Catalog { return e.cat }
