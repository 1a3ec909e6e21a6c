package exec

import "github.com/sluice-sql/sluice/internal/topology"

// Graph returns the graph the query runs. The caller must not change it.
func (q *Query) Graph() *topology.Graph { return q.graph }
