package planner

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-sql/sluice/catalog"
	"github.com/sluice-sql/sluice/format"
	"github.com/sluice-sql/sluice/internal/expr"
	"github.com/sluice-sql/sluice/internal/topology"
	"github.com/sluice-sql/sluice/internal/types"
	"github.com/sluice-sql/sluice/parser/ast"
	"github.com/sluice-sql/sluice/planner/bind"
)

// joinInput is one stream or table a FROM with joins reads.
type joinInput struct {
	src   *catalog.Source
	alias string
}

// keyRef is a source column the output of a join may be keyed by: a join
// expression that is a plain column reference, or (foreign-key join) a
// key column of the left table.
type keyRef struct {
	alias, name string
}

// joined is the column's name in the joined row: L_A for L.A.
func (k keyRef) joined() string { return k.alias + "_" + k.name }

// text is the column as ksqlDB's messages write it: L.A.
func (k keyRef) text() string { return k.alias + "." + k.name }

// joinScope binds expressions over a joined row. Columns of the inputs
// keep their names, qualified by their source's alias; an unqualified
// ROWTIME, ROWPARTITION or ROWOFFSET is the joined row's own.
type joinScope struct {
	cols bind.ColumnScope
	// names are the columns' names in the joined row (L_A), empty for the
	// columns a star does not select (pseudo-columns, keys, internal
	// columns).
	names []string
}

// Resolve implements bind.Scope.
func (s joinScope) Resolve(qualifier, name string) (int, *types.Type, bool) {
	if qualifier == "" {
		for i := 0; i < topology.PseudoColumns; i++ {
			if s.cols[i].Name == name {
				return i, s.cols[i].Type, true
			}
		}
	}
	return s.cols.Resolve(qualifier, name)
}

// Explain implements bind.ScopeDescriber with ksqlDB's message for an
// ambiguous column.
func (s joinScope) Explain(qualifier, name string) error {
	if _, _, ok := s.Resolve(qualifier, name); ok {
		return nil
	}
	var srcs []string
	for _, c := range s.cols {
		if c.Name == name && c.Qualifier != "" && (qualifier == "" || c.Qualifier == qualifier) {
			srcs = append(srcs, c.Qualifier+"."+name)
		}
	}
	if len(srcs) > 1 {
		return fmt.Errorf("Column '%s' is ambiguous. Could be %s.", name, strings.Join(srcs, " or "))
	}
	return nil
}

// Names implements bind.ScopeDescriber.
func (s joinScope) Names() []string {
	var out []string
	for _, c := range s.cols {
		if c.Name != "" {
			out = append(out, c.Name)
		}
	}
	return out
}

// joinRel is what a FROM with joins produces: the graph up to the last
// join and the relation over its rows.
type joinRel struct {
	g      *topology.Graph
	inputs []joinInput
	scope  joinScope
	// schema is the row layout after the last step.
	schema []types.Column
	// table says the joined rows are a table's (a table-table join).
	table      bool
	partitions int32
	// window is the windowing of the joined rows' keys (both sides'
	// windows are the same), nil when they are not windowed; windowCols
	// are the joined row's columns holding the bounds.
	window     *topology.KeyWindow
	windowCols [2]int
	// keys is how many key columns the joined row has; synthetic marks
	// ROWKEY, a key no source column holds (FULL OUTER joins, joins on
	// expressions); viable lists the columns that hold the key otherwise,
	// in the order ksqlDB prefers them; foreign lists the left table's
	// key columns of a foreign-key join, which key its output.
	keys      int
	synthetic bool
	synthName string
	viable    []keyRef
	foreign   []keyRef
	// equiv are the joined row's columns that hold the key's value.
	equiv []int
	// partitioned maps the canonical text (see canonicalText) of each
	// PARTITION BY expression to its key column, after PARTITION BY.
	partitioned map[string]int
}

// joinChain returns the sources of a left-deep join tree, left first, and
// its joins in order.
func joinChain(r ast.Relation) (*ast.TableRef, []*ast.Join) {
	var joins []*ast.Join
	for {
		switch x := r.(type) {
		case *ast.TableRef:
			slices.Reverse(joins)
			return x, joins
		case *ast.Join:
			joins = append(joins, x)
			r = x.Left
		default:
			return nil, nil
		}
	}
}

// pseudoRefs lists, per alias, the pseudo-columns the query names
// qualified by that alias (L.ROWTIME): each side carries them into the
// joined row as value columns.
func pseudoRefs(q *ast.Query, joins []*ast.Join) map[string][]string {
	out := map[string][]string{}
	visit := func(e ast.Expr) {
		if e == nil {
			return
		}
		ast.Walk(e, func(n ast.Expr) bool {
			c, ok := n.(*ast.ColumnRef)
			if ok && c.Qualifier != "" && (c.Name == topology.RowTime || c.Name == topology.RowPartition || c.Name == topology.RowOffset) && !slices.Contains(out[c.Qualifier], c.Name) {
				out[c.Qualifier] = append(out[c.Qualifier], c.Name)
			}
			return true
		})
	}
	for _, si := range q.Items {
		visit(si.Expr)
	}
	visit(q.Where)
	visit(q.Having)
	for _, e := range q.GroupBy {
		visit(e)
	}
	for _, e := range q.PartitionBy {
		visit(e)
	}
	for _, j := range joins {
		visit(j.On)
	}
	if len(q.PartitionBy) > 0 && len(q.GroupBy) == 0 {
		// A repartitioned join result carries every side's
		// pseudo-columns as values, as ksqlDB's does.
		first, _ := joinChain(q.From)
		refs := []*ast.TableRef{first}
		for _, j := range joins {
			refs = append(refs, j.Right)
		}
		for _, r := range refs {
			alias := r.Name
			if r.Alias != "" {
				alias = r.Alias
			}
			out[alias] = []string{topology.RowTime, topology.RowPartition, topology.RowOffset}
		}
	}
	return out
}

// joinSide is one input row of a join while it is planned: its steps, its
// row layout and a scope over it.
type joinSide struct {
	steps  []topology.Step
	schema []types.Column
	scope  bind.ColumnScope
	names  []string
}

// sourceSide is the row a source input brings to a join: the source's
// row, with the pseudo-columns the query names through its alias copied
// to the end.
func sourceSide(in joinInput, pseudo []string) joinSide {
	schema := SourceNode(in.src).Schema()
	side := joinSide{schema: schema, scope: bind.ScopeOf(in.alias, schema)}
	for i := 0; i < topology.PseudoColumns; i++ {
		// An unqualified pseudo-column is the joined row's; a qualified
		// one is the copy made below.
		side.scope[i].Qualifier = ""
	}
	side.names = make([]string, len(schema))
	for i := topology.PseudoColumns; i < len(schema); i++ {
		side.names[i] = in.alias + "_" + schema[i].Name
	}
	if len(pseudo) == 0 {
		return side
	}
	st := topology.Step{Kind: topology.Project}
	for i, c := range schema {
		st.Exprs = append(st.Exprs, expr.Column(i, c.Name, c.Type))
		st.Schema = append(st.Schema, c)
	}
	for _, p := range []string{topology.RowTime, topology.RowPartition, topology.RowOffset} {
		if !slices.Contains(pseudo, p) {
			continue
		}
		i := slices.IndexFunc(schema[:topology.PseudoColumns], func(c types.Column) bool { return c.Name == p })
		st.Exprs = append(st.Exprs, expr.Column(i, p, schema[i].Type))
		st.Schema = append(st.Schema, types.Column{Name: in.alias + "_" + p, Type: schema[i].Type})
		side.scope = append(side.scope, bind.ScopeColumn{Qualifier: in.alias, Name: p, Type: schema[i].Type})
		side.names = append(side.names, "")
	}
	side.steps = append(side.steps, st)
	side.schema = st.Schema
	return side
}

// rekeySide puts a Rekey and a Repartition on a side, so that its rows
// are keyed by key (bound over the side's row) and spread like the other
// side's: the new row is the pseudo-columns, the key, then every column of
// the side's row after its pseudo-columns.
func rekeySide(side *joinSide, key *expr.Expr, partitions int32, topic string, place keyPlacement) {
	rekey := topology.Step{Kind: topology.Rekey, Keys: 1}
	scope := bind.ColumnScope{}
	names := []string{}
	add := func(e *expr.Expr, c types.Column, sc bind.ScopeColumn, name string) {
		rekey.Exprs = append(rekey.Exprs, e)
		rekey.Schema = append(rekey.Schema, c)
		scope = append(scope, sc)
		names = append(names, name)
	}
	for i := 0; i < topology.PseudoColumns; i++ {
		c := side.schema[i]
		add(expr.Column(i, c.Name, c.Type), c, side.scope[i], "")
	}
	add(key, types.Column{Name: "KSQL_JOIN_KEY", Type: key.Type}, bind.ScopeColumn{Type: key.Type}, "")
	for i := topology.PseudoColumns; i < len(side.schema); i++ {
		c := side.schema[i]
		add(expr.Column(i, c.Name, c.Type), c, side.scope[i], side.names[i])
	}
	rep := topology.Step{Kind: topology.Repartition, Schema: rekey.Schema, Keys: 1, Partitions: partitions, Topic: topic, PlaceBy: place.format, PlaceProps: place.props}
	side.steps = append(side.steps, rekey, rep)
	side.schema, side.scope, side.names = rekey.Schema, scope, names
}

// keyPlacement is how a join side's rows are spread over partitions: as a
// producer spreads keys written in a key format.
type keyPlacement struct {
	format string
	props  map[string]string
}

// joinTypeText is how ksqlDB's messages write a join type.
func joinTypeText(t ast.JoinType) string {
	switch t {
	case ast.LeftJoin:
		return "LEFT [OUTER] JOIN"
	case ast.RightJoin:
		return "RIGHT [OUTER] JOIN"
	case ast.FullJoin:
		return "[FULL] OUTER JOIN"
	}
	return "[INNER] JOIN"
}

// condText prints a join condition as ksqlDB's messages do: every column
// qualified by its source, every comparison in parentheses.
func condText(e ast.Expr, quals map[*ast.ColumnRef]string) string {
	if b, ok := e.(*ast.Binary); ok && (b.Op == ast.OpEq || b.Op == ast.OpAnd || b.Op == ast.OpOr) {
		return "(" + condText(b.L, quals) + " " + b.Op.String() + " " + condText(b.R, quals) + ")"
	}
	if n, ok := e.(*ast.Nary); ok && (n.Op == ast.OpAnd || n.Op == ast.OpOr) {
		// As the nested form: ((A AND B) AND C).
		var b strings.Builder
		b.WriteString(strings.Repeat("(", len(n.Args)-1))
		for i, x := range n.Args {
			if i > 0 {
				b.WriteString(" " + n.Op.String() + " ")
			}
			b.WriteString(condText(x, quals))
			if i > 0 {
				b.WriteString(")")
			}
		}
		return b.String()
	}
	return exprQualified(e, quals)
}

// exprQualified prints e with its columns qualified as quals says.
func exprQualified(e ast.Expr, quals map[*ast.ColumnRef]string) string {
	if l, ok := e.(*ast.Literal); ok && l.Kind == ast.NullLit {
		return "null"
	}
	var text string
	withQualifiers(e, quals, func() { text = strings.ReplaceAll(ast.FormatExpr(e), "`", "") })
	return text
}

// withQualifiers runs fn with every column of e that quals names
// qualified by its alias there, then puts the columns back as they were.
func withQualifiers(e ast.Expr, quals map[*ast.ColumnRef]string, fn func()) {
	var refs []*ast.ColumnRef
	var saved []string
	ast.Walk(e, func(n ast.Expr) bool {
		if c, ok := n.(*ast.ColumnRef); ok {
			if q, ok := quals[c]; ok {
				refs = append(refs, c)
				saved = append(saved, c.Qualifier)
				c.Qualifier = q
			}
		}
		return true
	})
	defer func() {
		for i, c := range refs {
			c.Qualifier = saved[i]
		}
	}()
	fn()
}

// hasColumn reports whether a source row has a column called name.
func hasColumn(src *catalog.Source, name string) bool {
	if reserved(name) && name != "WINDOWSTART" && name != "WINDOWEND" {
		return true
	}
	for _, c := range src.Columns() {
		if c.Name == name {
			return true
		}
	}
	return false
}

// resolveOn finds the source of every column e reads among inputs:
// quals maps each column reference to its source's alias, and the
// returned set lists the aliases e reads.
func resolveOn(e ast.Expr, inputs []joinInput, quals map[*ast.ColumnRef]string) ([]string, error) {
	var set []string
	var err error
	ast.Walk(e, func(n ast.Expr) bool {
		c, ok := n.(*ast.ColumnRef)
		if !ok || err != nil {
			return err == nil
		}
		var found []string
		for _, in := range inputs {
			if c.Qualifier != "" && c.Qualifier != in.alias {
				continue
			}
			if hasColumn(in.src, c.Name) {
				found = append(found, in.alias)
			}
		}
		full := c.Name
		if c.Qualifier != "" {
			full = c.Qualifier + "." + c.Name
			if !slices.ContainsFunc(inputs, func(in joinInput) bool { return in.alias == c.Qualifier }) {
				err = errorf(c.Pos, "'%s' is not a valid stream/table name or alias.", c.Qualifier)
				return false
			}
		}
		switch len(found) {
		case 0:
			err = errorf(c.Pos, "JOIN ON column '%s' cannot be resolved.", full)
		case 1:
			quals[c] = found[0]
			if !slices.Contains(set, found[0]) {
				set = append(set, found[0])
			}
		default:
			cands := make([]string, len(found))
			for i, a := range found {
				cands[i] = a + "." + c.Name
			}
			err = errorf(c.Pos, "Column '%s' is ambiguous. Could be %s.", c.Name, strings.Join(cands, " or "))
		}
		return err == nil
	})
	return set, err
}

// bindOn binds one side of a join condition over a side's row, every
// column read through the alias resolveOn found for it.
func bindOn(cat *catalog.Catalog, e ast.Expr, sc bind.Scope, quals map[*ast.ColumnRef]string) (*expr.Expr, error) {
	var out *expr.Expr
	var err error
	withQualifiers(e, quals, func() { out, err = bindExpr(cat, e, sc) })
	return out, err
}

// planJoins plans the joins of a FROM clause: the graph that reads the
// first input, joins the others one after another and ends with the
// joined rows.
func planJoins(cat *catalog.Catalog, q *ast.Query, opts QueryOptions) (*joinRel, error) {
	first, joins := joinChain(q.From)
	if first == nil {
		return nil, errorf(q.From.Position(), "FROM reads a stream, a table or a join of them")
	}
	refs := []*ast.TableRef{first}
	for _, j := range joins {
		refs = append(refs, j.Right)
	}
	var inputs []joinInput
	var kafkaValue []string
	for _, r := range refs {
		if err := cancelled(opts.Ctx); err != nil {
			return nil, err
		}
		src, ok := cat.Source(r.Name)
		if !ok {
			return nil, errorf(r.Pos, "%s does not exist.\nSHOW STREAMS and SHOW TABLES list the sources you can query.", r.Name)
		}
		alias := src.Name
		if r.Alias != "" {
			alias = r.Alias
		}
		for _, in := range inputs {
			if in.src.Name == src.Name {
				return nil, errorf(r.Pos, "Can not join '%s' to '%s': self joins are not yet supported.", in.src.Name, src.Name)
			}
			if in.alias == alias {
				return nil, errorf(r.Pos, "%s names two sources of the join; give one of them another alias", alias)
			}
		}
		if src.ValueFormat == format.Kafka {
			kafkaValue = append(kafkaValue, src.Name)
		}
		inputs = append(inputs, joinInput{src: src, alias: alias})
	}
	if len(kafkaValue) > 0 {
		return nil, errorf(q.From.Position(), "Source(s) %s are using the 'KAFKA' value format. This format does not yet support JOIN.", strings.Join(kafkaValue, ", "))
	}
	pseudo := pseudoRefs(q, joins)

	g := &topology.Graph{QueryID: opts.QueryID, Source: SourceNode(inputs[0].src), OffsetReset: opts.OffsetReset}
	left := sourceSide(inputs[0], pseudo[inputs[0].alias])
	leftTable := inputs[0].src.Kind == catalog.Table
	leftPartitions := inputs[0].src.Partitions
	leftPlace := keyPlacement{inputs[0].src.KeyFormat, inputs[0].src.KeyProps}
	// The left row's key: its columns, and the columns holding its value.
	leftKeys := len(inputs[0].src.Key)
	var leftEquiv []int
	if leftKeys == 1 {
		leftEquiv = []int{topology.PseudoColumns}
	}
	leftName := inputs[0].alias
	leftWindow := inputs[0].src.Window
	// ksIndex counts the nodes Kafka Streams would have numbered so far
	// (see ssStoreChangelogs): four for each source.
	ksIndex := 4
	var rel *joinRel
	for i, j := range joins {
		rin := inputs[i+1]
		right := sourceSide(rin, pseudo[rin.alias])
		rightTable := rin.src.Kind == catalog.Table
		state := "join"
		if len(joins) > 1 {
			state = fmt.Sprintf("join%d", i+1)
		}
		// Internal topics are named as ksqlDB names them: after the
		// join's node (Join, then Join2, ... in an n-way join).
		node, nth := "Join", ""
		if i > 0 {
			nth = fmt.Sprint(i + 1)
			node += nth
		}
		internal := func(name string) string {
			if opts.QueryID == "" {
				return ""
			}
			return opts.InternalPrefix + opts.QueryID + "-" + name
		}

		c, err := joinCondition(cat, j, inputs[:i+2], left, right)
		if err != nil {
			return nil, err
		}
		lexpr, rexpr := c.left, c.right
		// As ksqlDB, the windowing of the sides is checked before the
		// kinds of join they allow.
		if err := checkWindowsMatch(j, leftName, leftWindow, rin); err != nil {
			return nil, err
		}

		// The kinds of the sides decide what joins are possible.
		// ksqlDB names the sources of the join: the left one is that of
		// the condition's side over the rows joined so far.
		leftSource := inputs[0].src.Name
		if ref, ok := c.leftAST.(*ast.ColumnRef); ok {
			for _, in := range inputs[:i+1] {
				if in.alias == c.quals[ref] {
					leftSource = in.src.Name
				}
			}
		}
		got := fmt.Sprintf("%s %s %s", leftSource, joinTypeText(j.Type), rin.src.Name)
		switch {
		case leftTable && !rightTable:
			return nil, errorf(j.Pos, "Invalid join order: table-stream joins are not supported; only stream-table joins. Got %s.", got)
		case !leftTable && rightTable && j.Type == ast.FullJoin:
			return nil, errorf(j.Pos, "Invalid join type: full-outer join not supported for stream-table join. Got %s.", got)
		case !leftTable && rightTable && j.Type == ast.RightJoin:
			return nil, errorf(j.Pos, "Invalid join type: right-outer join not supported for stream-table join. Got %s.", got)
		case !leftTable && !rightTable && j.Within == nil:
			return nil, errorf(j.Pos, "Stream-Stream joins must have a WITHIN clause specified. None was provided. To learn about how to specify a WITHIN clause with a stream-stream join, please visit: https://docs.confluent.io/current/ksql/docs/syntax-reference.html#create-stream-as-select")
		case rightTable && j.Within != nil:
			kind := "Stream-Table"
			if leftTable {
				kind = "Table-Table"
			}
			return nil, errorf(j.Within.Pos, "A window definition was provided for a %s join. These joins are not windowed. Please drop the window definition (ie. the WITHIN clause) and try to execute your join again.", kind)
		}
		rightKeyed := len(rin.src.Key) == 1 && isColumn(rexpr, topology.PseudoColumns)
		leftKeyed := leftKeys == 1 && lexpr.Op == expr.OpColumn && slices.Contains(leftEquiv, lexpr.Col)
		if leftKeyed && lexpr.Col != topology.PseudoColumns {
			// A column holding the key's value (an earlier join's
			// column) joins by the key itself, which an outer join
			// never leaves null.
			lexpr = expr.Column(topology.PseudoColumns, left.schema[topology.PseudoColumns].Name, lexpr.Type)
		}
		foreign := false
		if rightTable && !rightKeyed {
			if leftTable {
				return nil, errorf(j.On.Position(), "Invalid join condition: table-table joins require to join on the primary key of the right input table. Got %s.", c.text())
			}
			return nil, errorf(j.On.Position(), "Invalid join condition: stream-table joins require to join on the table's primary key. Got %s.", c.text())
		}
		if leftTable && !leftKeyed {
			// A table joined on another column of its own to the right
			// table's key: a foreign-key join.
			switch {
			case i > 0 && sourceKeyRef(c.leftAST, c.quals, inputs[:i+1]):
				// The key column of one of the joined tables, which an
				// earlier FULL OUTER join no longer keys its rows by: ksqlDB
				// takes it for a primary-key join whose left side, a
				// table, it cannot repartition.
				return nil, errorf(j.On.Position(), "Cannot repartition a TABLE source. If this is a join, make sure that the criteria uses the TABLE's key column %s instead of [%s]", left.schema[topology.PseudoColumns].Name, joinColumnAlias(c.leftAST, c.quals))
			case i > 0:
				return nil, errorf(j.On.Position(), "Invalid join condition: foreign-key table-table joins are not supported as part of n-way joins. Got %s.", c.text())
			case j.Type == ast.RightJoin:
				return nil, errorf(j.Pos, "RIGHT OUTER JOIN on a foreign key is not supported")
			case j.Type == ast.FullJoin:
				return nil, errorf(j.Pos, "FULL OUTER JOIN on a foreign key is not supported")
			case rin.src.Window != nil:
				return nil, errorf(j.On.Position(), "Foreign-key table-table joins are not supported on windowed tables.")
			}
			foreign = true
		}
		// Co-partition: a side not keyed by its join expression is rekeyed
		// and repartitioned, and so is a right side keyed in another
		// format than the left's, whose equal keys a producer puts in
		// other partitions. A rekeyed side's rows go where a producer of
		// the other side's topic puts their key, so that they meet the
		// other side's rows in one task.
		rekeyLeft := !foreign && !leftKeyed
		rekeyRight := !rightKeyed || (!foreign && leftKeyed && !strings.EqualFold(leftPlace.format, rin.src.KeyFormat))
		rightPlace := keyPlacement{rin.src.KeyFormat, rin.src.KeyProps}
		switch {
		case rekeyLeft && rekeyRight:
			if strings.EqualFold(leftPlace.format, format.None) {
				leftPlace = keyPlacement{format: opts.Defaults.KeyFormat}
				if leftPlace.format == "" {
					leftPlace.format = format.Kafka
				}
			}
			rightPlace = leftPlace
		case rekeyLeft:
			leftPlace = rightPlace
		case rekeyRight:
			rightPlace = leftPlace
		}
		// A key written in a schema-registry format carries the id of its
		// subject's schema, so equal keys of two topics differ byte for
		// byte and land in partitions that do not match: as ksqlDB, every
		// side of such a join is repartitioned, and both sides' rows are
		// placed by their key's value alone (the internal encoding), where
		// they meet. A side that is an earlier join repartitioned so is
		// already placed (its placement has no format). A foreign-key join
		// looks its right rows up by their key's value, but a STRUCT key
		// registered by another writer may have fields of other names:
		// the right side is repartitioned.
		var forced [2]bool
		switch {
		case foreign:
			if format.IsRegistryFormat(rin.src.KeyFormat) && slices.ContainsFunc(rin.src.Key, func(c types.Column) bool { return c.Type.Kind == types.Struct }) {
				forced[1], rightPlace = true, keyPlacement{}
			}
		case format.IsRegistryFormat(leftPlace.format):
			forced = [2]bool{!rekeyLeft, !rekeyRight}
			leftPlace, rightPlace = keyPlacement{}, keyPlacement{}
		}
		rekeyLeft = rekeyLeft || forced[0]
		rekeyRight = rekeyRight || forced[1]
		if err := checkWindows(j, leftWindow, rin, leftKeyed && rightKeyed, leftTable, forced); err != nil {
			return nil, err
		}
		if !foreign && leftPartitions != rin.src.Partitions {
			return nil, errorf(j.Pos, "Can't join `%s` with `%s` since the number of partitions don't match. `%s` partitions = %d; `%s` partitions = %d. Please repartition either one so that the number of partitions match.",
				leftName, rin.alias, leftName, leftPartitions, rin.alias, rin.src.Partitions)
		}

		if rekeyLeft {
			topic := node + "-left-repartition"
			switch {
			case leftTable:
				topic = "LeftSourceKeyed-SelectKey-repartition"
			case rightTable:
				topic = node + "-repartition"
			}
			rekeySide(&left, lexpr, leftPartitions, internal(topic), leftPlace)
			if leftTable {
				left.steps[len(left.steps)-1].Table = true
			}
			lexpr = expr.Column(topology.PseudoColumns, "KSQL_JOIN_KEY", lexpr.Type)
		}
		if rekeyRight {
			topic := node + "-right-repartition"
			if rightTable {
				topic = "RightSourceKeyed" + nth + "-SelectKey-repartition"
			}
			rekeySide(&right, rexpr, rin.src.Partitions, internal(topic), rightPlace)
			if rightTable {
				right.steps[len(right.steps)-1].Table = true
			}
			rexpr = expr.Column(topology.PseudoColumns, "KSQL_JOIN_KEY", rexpr.Type)
		}
		g.Steps = append(g.Steps, left.steps...)
		left.steps = nil

		spec := &topology.JoinSpec{LeftTable: leftTable, RightTable: rightTable, Within: joinWindow(j.Within)}
		spec.TimeWindowed = !leftTable && !rightTable && leftWindow != nil && leftWindow.Type != topology.Session
		switch j.Type {
		case ast.LeftJoin:
			spec.Type = topology.LeftJoin
		case ast.RightJoin:
			spec.Type = topology.RightJoin
		case ast.FullJoin:
			spec.Type = topology.OuterJoin
		default:
			spec.Type = topology.InnerJoin
		}
		// Each side's rows are kept in a state table: a table side's by a
		// Materialize step, which the join reads; a stream side's within
		// the window by the join itself.
		rightKeys := len(rin.src.Key)
		if rekeyRight {
			rightKeys = 1
		}
		if leftTable {
			changelog := "KafkaTopic_Left-Reduce-changelog"
			switch {
			case i > 0:
				changelog = node + "-left-changelog"
			case rekeyLeft:
				changelog = "LeftSourceKeyed-Materialize-changelog"
			}
			st := topology.Step{Kind: topology.Materialize, StateTable: state + "-left", Changelog: internal(changelog), Keys: leftKeys, Schema: left.schema}
			g.Steps = append(g.Steps, st)
			spec.LeftState, spec.LeftChangelog = st.StateTable, st.Changelog
		} else if !rightTable {
			spec.LeftState, spec.LeftChangelog = state+"-left", internal(node+"-left-changelog")
		}
		// Kafka Streams numbers the processors and stores it names itself
		// in the order it builds them: the stores of a stream-stream join
		// take the next numbers after its sources' and repartitions'
		// nodes, and ksqlDB's changelog topics are named after them.
		ksIndex += 4
		for _, r := range [2]bool{rekeyLeft, rekeyRight} {
			if r {
				ksIndex += 4
			}
		}
		var ssThis, ssOther string
		if !leftTable && !rightTable {
			ssThis, ssOther = ssStoreChangelogs(spec.Type, ksIndex)
			spec.LeftChangelog = internal(ssThis)
			ksIndex += 2
			if spec.Type != topology.InnerJoin && spec.Within != nil && spec.Within.Grace >= 0 {
				spec.ExtraChangelog = internal(ssShared(spec.Type, ksIndex))
				ksIndex++
			}
		}
		if rightTable {
			changelog := "KafkaTopic_Right" + nth + "-Reduce-changelog"
			if rekeyRight {
				changelog = "RightSourceKeyed" + nth + "-Materialize-changelog"
			}
			st := topology.Step{Kind: topology.Materialize, StateTable: state + "-right", Changelog: internal(changelog), Keys: rightKeys, Schema: right.schema}
			right.steps = append(right.steps, st)
			spec.RightState, spec.RightChangelog = st.StateTable, st.Changelog
		} else {
			spec.RightState, spec.RightChangelog = state+"-right", internal(ssOther)
		}
		if foreign {
			spec.ForeignKey = lexpr
		} else {
			spec.LeftKey = []*expr.Expr{lexpr}
			spec.RightKey = []*expr.Expr{rexpr}
		}
		spec.Right = &topology.Graph{Source: SourceNode(rin.src), Steps: right.steps, Output: right.schema, KeyColumns: rightKeys, OffsetReset: opts.OffsetReset}

		// The joined row: pseudo-columns, key, the left row's columns,
		// the right row's columns.
		next := &joinRel{g: g, inputs: inputs[:i+2], table: leftTable && rightTable, partitions: leftPartitions}
		var schema []types.Column
		var scope bind.ColumnScope
		var names []string
		add := func(c types.Column, sc bind.ScopeColumn, name string) {
			schema = append(schema, c)
			scope = append(scope, sc)
			names = append(names, name)
		}
		for k := 0; k < topology.PseudoColumns; k++ {
			c := left.schema[k]
			add(c, bind.ScopeColumn{Name: c.Name, Type: c.Type}, "")
		}
		if foreign {
			next.keys = leftKeys
			for k := 0; k < leftKeys; k++ {
				c := left.schema[topology.PseudoColumns+k]
				sc := left.scope[topology.PseudoColumns+k]
				add(types.Column{Name: left.names[topology.PseudoColumns+k], Type: c.Type}, bind.ScopeColumn{Type: c.Type}, "")
				next.foreign = append(next.foreign, keyRef{alias: sc.Qualifier, name: sc.Name})
			}
		} else {
			next.keys = 1
			if j.Type != ast.FullJoin {
				// The columns that hold the key, in ksqlDB's order: those
				// of the rows joined so far when the condition's left side
				// is one of them (it is then equal to them), then the
				// condition's own columns.
				if rel != nil && leftKeyed {
					next.viable = append(next.viable, rel.viable...)
				}
				for _, e := range []ast.Expr{c.leftAST, c.rightAST} {
					if cr, ok := e.(*ast.ColumnRef); ok {
						k := keyRef{alias: c.quals[cr], name: cr.Name}
						if !slices.Contains(next.viable, k) {
							next.viable = append(next.viable, k)
						}
					}
				}
			}
			next.synthetic = len(next.viable) == 0
			name := syntheticKey(inputs[:i+2])
			next.synthName = name
			sc := bind.ScopeColumn{Name: name, Type: lexpr.Type}
			if !next.synthetic {
				name = next.viable[0].joined()
				sc = bind.ScopeColumn{Type: lexpr.Type}
			}
			if hasMap(lexpr.Type) {
				return nil, errorf(j.On.Position(), "Map keys, including types that contain maps, are not supported as they may lead to unexpected behavior due to inconsistent serialization. Key column name: `%s`. Column type: %s. See https://github.com/confluentinc/ksql/issues/6621 for more.", name, lexpr.Type)
			}
			add(types.Column{Name: name, Type: lexpr.Type}, sc, "")
		}
		for k := topology.PseudoColumns; k < len(left.schema); k++ {
			c, sc := left.schema[k], left.scope[k]
			name := left.names[k]
			if name == "" && k == topology.PseudoColumns && sc.Qualifier == "" && sc.Name != "" {
				// An earlier join's synthetic key is no longer selectable.
				sc = bind.ScopeColumn{Type: sc.Type}
			}
			if name != "" {
				c.Name = name
			}
			add(c, sc, name)
		}
		for k := topology.PseudoColumns; k < len(right.schema); k++ {
			c, sc := right.schema[k], right.scope[k]
			if right.names[k] != "" {
				c.Name = right.names[k]
			}
			add(c, sc, right.names[k])
		}
		// The columns of the joined row that hold the key.
		next.equiv = []int{topology.PseudoColumns}
		for _, v := range next.viable {
			for k, sc := range scope {
				if k >= topology.PseudoColumns+next.keys && sc.Qualifier == v.alias && sc.Name == v.name {
					next.equiv = append(next.equiv, k)
				}
			}
		}
		for _, f := range next.foreign {
			for k, sc := range scope {
				if k >= topology.PseudoColumns+next.keys && sc.Qualifier == f.alias && sc.Name == f.name {
					next.equiv = append(next.equiv, k)
				}
			}
		}
		step := topology.Step{Kind: topology.Join, Schema: schema, Keys: next.keys, Join: spec}
		g.Steps = append(g.Steps, step)
		next.schema = schema
		if leftWindow != nil {
			next.window = leftWindow
			next.windowCols = [2]int{-1, -1}
			for k := topology.PseudoColumns + next.keys; k < len(scope); k++ {
				for b, name := range []string{topology.WindowStart, topology.WindowEnd} {
					if next.windowCols[b] < 0 && scope[k].Name == name {
						next.windowCols[b] = k
					}
				}
			}
		}
		next.scope = joinScope{cols: scope, names: names}
		rel = next

		// The joined row is the next join's left row.
		left = joinSide{schema: schema, scope: scope, names: names}
		leftTable = next.table
		leftKeys = next.keys
		leftEquiv = next.equiv
		leftName = rin.alias
		leftWindow = next.window
	}
	return rel, nil
}

// sourceKeyRef reports whether e is a column reference to the single key
// column of the input it names.
func sourceKeyRef(e ast.Expr, quals map[*ast.ColumnRef]string, inputs []joinInput) bool {
	ref, ok := e.(*ast.ColumnRef)
	if !ok {
		return false
	}
	for _, in := range inputs {
		if in.alias == quals[ref] {
			return len(in.src.Key) == 1 && in.src.Key[0].Name == ref.Name
		}
	}
	return false
}

// joinColumnAlias is the name ksqlDB gives a source's column in a join's
// rows: the source's alias, an underscore, the column's name.
func joinColumnAlias(e ast.Expr, quals map[*ast.ColumnRef]string) string {
	if ref, ok := e.(*ast.ColumnRef); ok {
		return quals[ref] + "_" + ref.Name
	}
	return exprQualified(e, quals)
}

// joinCond is a join's condition, resolved: the expression of each side,
// bound over the side's row.
type joinCond struct {
	on                ast.Expr
	cond              *ast.Binary
	leftAST, rightAST ast.Expr
	left, right       *expr.Expr
	// quals maps every column the condition reads to its source's alias.
	quals map[*ast.ColumnRef]string
}

// text is the condition as ksqlDB's messages give it: L.A = R.B.
func (c *joinCond) text() string {
	return exprQualified(c.cond.L, c.quals) + " = " + exprQualified(c.cond.R, c.quals)
}

// joinCondition resolves the ON clause of j, whose right source is the
// last of inputs: one equality whose sides read one source each, the
// right source on one side, with the same type.
func joinCondition(cat *catalog.Catalog, j *ast.Join, inputs []joinInput, left, right joinSide) (*joinCond, error) {
	rin := inputs[len(inputs)-1]
	c := &joinCond{on: j.On, quals: map[*ast.ColumnRef]string{}}
	var badQual *ast.ColumnRef
	ast.Walk(j.On, func(n ast.Expr) bool {
		if cr, ok := n.(*ast.ColumnRef); ok && badQual == nil && cr.Qualifier != "" && !slices.ContainsFunc(inputs, func(in joinInput) bool { return in.alias == cr.Qualifier }) {
			badQual = cr
		}
		return badQual == nil
	})
	if badQual != nil {
		return nil, errorf(badQual.Pos, "'%s' is not a valid stream/table name or alias.", badQual.Qualifier)
	}
	if _, err := resolveOn(j.On, inputs, c.quals); err != nil {
		return nil, err
	}
	cond, ok := j.On.(*ast.Binary)
	if !ok || cond.Op != ast.OpEq {
		if n, chain := j.On.(*ast.Nary); ok && cond.Op == ast.OpAnd || chain && n.Op == ast.OpAnd {
			return nil, errorf(j.On.Position(), "Invalid join condition: joins on multiple conditions are not yet supported. Got %s.", condText(j.On, c.quals))
		}
		return nil, errorf(j.On.Position(), "Unsupported join expression: %s. Join on one equality of a column or expression of each side (ON L.A = R.B).", condText(j.On, c.quals))
	}
	c.cond = cond
	lset, _ := resolveOn(cond.L, inputs, c.quals)
	rset, _ := resolveOn(cond.R, inputs, c.quals)
	for _, side := range []struct {
		e   ast.Expr
		set []string
	}{{cond.L, lset}, {cond.R, rset}} {
		if len(side.set) != 1 {
			return nil, errorf(side.e.Position(), "Invalid comparison expression '%s' in join '%s'. Each side of the join comparision must contain references from exactly one source.", exprQualified(side.e, c.quals), condText(j.On, c.quals))
		}
	}
	c.leftAST, c.rightAST = cond.L, cond.R
	if lset[0] == rin.alias {
		c.leftAST, c.rightAST = cond.R, cond.L
		lset, rset = rset, lset
	}
	if lset[0] == rin.alias || rset[0] != rin.alias {
		return nil, errorf(j.On.Position(), "Invalid join condition: one side of %s must read %s and the other a source joined before it.", condText(j.On, c.quals), rin.alias)
	}
	var err error
	if c.left, err = bindOn(cat, c.leftAST, joinScope{cols: left.scope}, c.quals); err != nil {
		return nil, err
	}
	if c.right, err = bindOn(cat, c.rightAST, joinScope{cols: right.scope}, c.quals); err != nil {
		return nil, err
	}
	if c.left.Type == nil || c.right.Type == nil || c.left.Type.String() != c.right.Type.String() {
		typed := func(e ast.Expr) string {
			t := c.left.Type
			if e == c.rightAST {
				t = c.right.Type
			}
			return fmt.Sprintf("%s{%s}", exprQualified(e, c.quals), t)
		}
		return nil, errorf(j.On.Position(), "Invalid join condition: types don't match. Got %s = %s.", typed(cond.L), typed(cond.R))
	}
	return c, nil
}

// isColumn reports whether e reads column col of its row.
func isColumn(e *expr.Expr, col int) bool {
	return e != nil && e.Op == expr.OpColumn && e.Col == col
}

// ssStoreChangelogs names the changelog topics of a stream-stream join's
// two window stores (the left side's, then the right side's) as ksqlDB's
// are named, after the stores Kafka Streams numbers from n: a side whose
// unmatched rows are kept is an OUTER store. A RIGHT join runs as a LEFT
// join of the right side, whose store is then the first.
func ssStoreChangelogs(t topology.JoinType, n int) (left, right string) {
	name := func(kind string, i int) string { return fmt.Sprintf("KSTREAM-%s-%010d-store-changelog", kind, i) }
	switch t {
	case topology.LeftJoin:
		return name("JOINTHIS", n), name("OUTEROTHER", n+1)
	case topology.RightJoin:
		return name("OUTEROTHER", n+1), name("JOINTHIS", n)
	case topology.OuterJoin:
		return name("OUTERTHIS", n), name("OUTEROTHER", n+1)
	}
	return name("JOINTHIS", n), name("JOINOTHER", n+1)
}

// ssShared names the changelog of the store in which an outer
// stream-stream join with a grace period keeps its unmatched rows, the
// store Kafka Streams numbers n.
func ssShared(t topology.JoinType, n int) string {
	kind := "LEFTSHARED"
	if t == topology.OuterJoin {
		kind = "OUTERSHARED"
	}
	return fmt.Sprintf("KSTREAM-%s-%010d-store-changelog", kind, n)
}

// joinWindow converts a WITHIN clause.
func joinWindow(w *ast.Within) *topology.JoinWindow {
	if w == nil {
		return nil
	}
	out := &topology.JoinWindow{Before: w.Before.Milliseconds(), After: w.After.Milliseconds(), Grace: -1}
	if w.Grace != nil {
		out.Grace = w.Grace.Milliseconds()
	}
	return out
}

// planJoinSelect plans a SELECT whose FROM joins streams and tables.
func planJoinSelect(cat *catalog.Catalog, q *ast.Query, opts QueryOptions) (*QueryPlan, error) {
	persistent := opts.Sink != ""
	jr, err := planJoins(cat, q, opts)
	if err != nil {
		return nil, err
	}
	if err := cancelled(opts.Ctx); err != nil {
		return nil, err
	}
	g := jr.g
	aggregating := len(q.GroupBy) > 0 || len(aggregateCalls(q.Items, q.Having)) > 0
	if err := tableFunctionsWithAggregation(q, aggregating); err != nil {
		return nil, err
	}
	table := jr.table || aggregating
	switch {
	case persistent && opts.Target == nil && table && opts.SinkKind != catalog.Table:
		return nil, errorf(q.Pos, "Invalid result type. Your SELECT query produces a TABLE. Please use CREATE TABLE AS SELECT statement instead.")
	case persistent && opts.Target == nil && !table && opts.SinkKind == catalog.Table:
		return nil, errorf(q.Pos, "Invalid result type. Your SELECT query produces a STREAM. Please use CREATE STREAM AS SELECT statement instead.")
	case opts.Target != nil && table:
		return nil, errorf(q.Pos, "INSERT INTO can only be used to insert into a stream, and this query produces a TABLE.")
	case q.Window != nil && !aggregating:
		return nil, errorf(q.Window.Pos, "WINDOW needs an aggregation: add GROUP BY and an aggregate function, or remove the WINDOW clause.")
	case q.Emit == ast.EmitFinal && (q.Window == nil || !aggregating):
		return nil, errorf(q.Pos, "EMIT FINAL is only supported for windowed aggregations.")
	case len(q.PartitionBy) > 0 && jr.table:
		return nil, errorf(q.PartitionBy[0].Position(), "Cannot repartition a TABLE source. PARTITION BY applies to streams.")
	case len(q.PartitionBy) > 0 && jr.window != nil:
		return nil, errorf(q.PartitionBy[0].Position(), "Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385.")
	case q.Having != nil && len(q.GroupBy) == 0 && len(aggregateCalls(q.Items, nil)) == 0:
		// An aggregate in the select list makes a single group, which
		// HAVING may filter.
		return nil, errorf(q.Having.Position(), "HAVING needs GROUP BY; add GROUP BY or use WHERE")
	}
	if persistent {
		if _, err := checkProps(opts.SinkProps, sinkProps); err != nil {
			return nil, err
		}
	}
	aliases := make([]string, len(jr.inputs))
	for i, in := range jr.inputs {
		aliases[i] = in.alias
	}
	if err := windowBoundsInWhere(q, jr.window != nil, jr.scope, func(s bind.Scope) error {
		_, err := bindJoined(cat, "WHERE", q.Where, s, aliases)
		return err
	}); err != nil {
		return nil, err
	}
	if q.Where != nil {
		pred, err := bindJoined(cat, "WHERE", q.Where, jr.scope, aliases)
		if err != nil {
			return nil, err
		}
		if pred.Type == nil || pred.Type.Kind != types.Boolean {
			return nil, errorf(q.Where.Position(), "WHERE must be a BOOLEAN condition, not %s", pred.Type)
		}
		g.Steps = append(g.Steps, topology.Step{Kind: topology.Filter, Predicate: pred, Schema: jr.schema, Retract: jr.table})
	}
	// The source a sink takes its formats and partitions from: the first
	// input.
	first := *jr.inputs[0].src
	first.Partitions = jr.partitions

	if aggregating && q.Window != nil {
		// ksqlDB does not give a windowed aggregation over a join its
		// window bounds.
		for _, si := range q.Items {
			if si.Expr == nil {
				continue
			}
			var bound *ast.ColumnRef
			ast.Walk(si.Expr, func(n ast.Expr) bool {
				if c, ok := n.(*ast.ColumnRef); ok && bound == nil && windowBound(c.Name) {
					bound = c
				}
				return bound == nil
			})
			if bound != nil {
				return nil, errorf(bound.Pos, "SELECT column '%s' cannot be resolved. A windowed aggregation over a JOIN has no window bounds to select.", bound.Name)
			}
		}
	}
	var items []item
	keys := 0
	droppedKey := false
	// A windowed result keeps its windows: the sink reads each row's
	// bounds from two columns after the output.
	keyWindow := jr.window
	bounds := jr.windowCols
	if aggregating {
		rel := relation{scope: jr.scope.cols, joinNames: jr.scope.names}
		src := first
		src.Key = nil
		if jr.table {
			src.Kind = catalog.Table
		} else {
			src.Kind = catalog.Stream
		}
		var steps []topology.Step
		if rel, steps, err = aggregate(cat, q, rel, &src, "", opts); err != nil {
			return nil, err
		}
		g.Steps = append(g.Steps, steps...)
		agg := &steps[len(steps)-1]
		if q.Having != nil {
			pred, err := bindIn(cat, "HAVING", q.Having, rel.bindScope(), "")
			if err != nil {
				return nil, havingError(err, rel)
			}
			if pred.Type == nil || pred.Type.Kind != types.Boolean {
				return nil, errorf(q.Having.Position(), "HAVING must be a BOOLEAN condition, not %s", pred.Type)
			}
			g.Steps = append(g.Steps, topology.Step{Kind: topology.Filter, Predicate: pred, Schema: agg.Schema, Retract: true})
		}
		keyWindow = rel.window
		for b, c := range topology.WindowColumns() {
			if keyWindow != nil {
				bounds[b], _, _ = rel.scope.Resolve("", c.Name)
			}
		}
		if items, err = projection(cat, q.Items, rel, "", !persistent, jr.aliasGen()); err != nil {
			return nil, err
		}
		joinAggNames(items, q.Items, jr)
		if persistent {
			if items, keys, err = keysFirst(items, rel, opts.Sink, q.Pos); err != nil {
				return nil, err
			}
		}
	} else if len(q.PartitionBy) > 0 {
		prel, pjr, step, err := joinPartitionBy(cat, q.PartitionBy, jr, aliases, opts)
		if err != nil {
			return nil, err
		}
		g.Steps = append(g.Steps, step...)
		if items, err = joinProjection(cat, q.Items, pjr, aliases); err != nil {
			return nil, err
		}
		droppedKey = len(prel.keys) == 0
		if persistent {
			if items, keys, err = keysFirst(items, prel, opts.Sink, q.Pos); err != nil {
				return nil, err
			}
		}
	} else {
		if items, err = joinProjection(cat, q.Items, jr, aliases); err != nil {
			return nil, err
		}
		if persistent {
			if items, keys, err = joinKeysFirst(items, jr, opts.Sink, q.Pos); err != nil {
				return nil, err
			}
		}
	}
	if persistent && opts.Target == nil {
		if err := checkSinkTimestamp(items, opts); err != nil {
			return nil, err
		}
	}
	g.KeyColumns = keys
	return finishSelect(g, q, opts, selectTail{items: items, keyWindow: keyWindow, bounds: bounds,
		sinkSource: &first, droppedKey: droppedKey, materialize: jr.table && !aggregating})
}

// bindJoined binds e, an expression of clause, over a joined row, with
// ksqlDB's message for a qualifier that names no source.
func bindJoined(cat *catalog.Catalog, clause string, e ast.Expr, sc bind.Scope, aliases []string) (*expr.Expr, error) {
	var bad *ast.ColumnRef
	ast.Walk(e, func(x ast.Expr) bool {
		if c, ok := x.(*ast.ColumnRef); ok && bad == nil && c.Qualifier != "" && !slices.Contains(aliases, c.Qualifier) {
			bad = c
		}
		return true
	})
	if bad != nil {
		return nil, errorf(bad.Pos, "'%s' is not a valid stream/table name or alias.", bad.Qualifier)
	}
	out, err := bindClause(cat, clause, e, sc)
	if err == nil {
		return out, nil
	}
	var pe *Error
	if !errors.As(err, &pe) {
		return nil, err
	}
	switch {
	case strings.HasPrefix(pe.Msg, "column '"):
		msg := strings.Replace(pe.Msg, "; known columns:", ". Known columns:", 1)
		return nil, &Error{Pos: pe.Pos, Msg: clause + " " + msg}
	case clause == "WHERE" && whereError(pe, e) != nil:
		return nil, whereError(pe, e)
	case clause == "WHERE":
		return nil, &Error{Pos: pe.Pos, Msg: "Invalid Predicate: " + pe.Msg}
	case clause == "SELECT":
		return nil, &Error{Pos: pe.Pos, Msg: "Invalid Select: " + pe.Msg}
	}
	return nil, err
}

// joinProjection binds the select list over a joined row. A star selects
// the inputs' columns named L_A; a column selected by itself keeps its
// name unless another input has a column of that name too, as ksqlDB
// names them. keyCol marks the items that read a column holding the key.
// aliasGen names the join's unaliased select items, clear of the columns
// of every source it joins.
func (jr *joinRel) aliasGen() *aliasGen {
	srcs := make([]*catalog.Source, len(jr.inputs))
	for i, in := range jr.inputs {
		srcs[i] = in.src
	}
	return newAliasGen(srcs...)
}

func joinProjection(cat *catalog.Catalog, list []ast.SelectItem, jr *joinRel, aliases []string) ([]item, error) {
	count := map[string]int{}
	for _, in := range jr.inputs {
		for _, c := range in.src.Columns() {
			count[c.Name]++
		}
		for _, p := range []string{topology.RowTime, topology.RowPartition, topology.RowOffset} {
			count[p]++
		}
	}
	keyOf := func(idx int) string {
		if idx == topology.PseudoColumns && jr.synthetic {
			return jr.synthName
		}
		if jr.partitioned != nil && idx >= topology.PseudoColumns && idx < topology.PseudoColumns+jr.keys {
			return jr.schema[idx].Name
		}
		sc := jr.scope.cols[idx]
		for _, v := range jr.viable {
			if sc.Qualifier == v.alias && sc.Name == v.name {
				return v.joined()
			}
		}
		for _, f := range jr.foreign {
			if sc.Qualifier == f.alias && sc.Name == f.name {
				return f.joined()
			}
		}
		return ""
	}
	var out []item
	names := jr.aliasGen()
	for _, si := range list {
		if si.Star {
			if si.StarSource != "" && !slices.Contains(aliases, si.StarSource) {
				return nil, errorf(si.Pos, "'%s' is not a valid stream/table name or alias.", si.StarSource)
			}
			if si.StarSource == "" && jr.synthetic {
				// A star selects the synthetic key too.
				sc := jr.scope.cols[topology.PseudoColumns]
				out = append(out, item{pos: si.Pos, name: sc.Name, e: expr.Column(topology.PseudoColumns, sc.Name, sc.Type), keyCol: jr.synthName})
			}
			for idx, name := range jr.scope.names {
				sc := jr.scope.cols[idx]
				if name == "" || si.StarSource != "" && sc.Qualifier != si.StarSource {
					continue
				}
				out = append(out, item{pos: si.Pos, name: name, e: expr.Column(idx, sc.Name, sc.Type), keyCol: keyOf(idx)})
			}
			continue
		}
		if si.StructStar {
			st, err := bindJoined(cat, "SELECT", si.Expr, jr.scope, aliases)
			if err != nil {
				return nil, err
			}
			if st.Type == nil || st.Type.Kind != types.Struct {
				return nil, errorf(si.Pos, "-> * selects the fields of a STRUCT, but %s is %s", ast.FormatExpr(si.Expr), st.Type)
			}
			for _, f := range st.Type.Fields {
				e, err := bindJoined(cat, "SELECT", &ast.Dereference{Pos: si.Pos, X: si.Expr, Field: f.Name}, jr.scope, aliases)
				if err != nil {
					return nil, err
				}
				out = append(out, item{pos: si.Pos, name: f.Name, e: e})
			}
			continue
		}
		e, err := bindJoined(cat, "SELECT", si.Expr, jr.scope, aliases)
		if err != nil {
			return nil, err
		}
		if e.Type == nil {
			return nil, errorf(si.Pos, "Can't infer a type of null. Please explicitly cast it to a required type, e.g. CAST(null AS VARCHAR).")
		}
		it := item{pos: si.Pos, e: e}
		if e.Op == expr.OpColumn {
			if _, ok := si.Expr.(*ast.ColumnRef); ok {
				it.keyCol = keyOf(e.Col)
			}
		}
		if k, ok := jr.partitioned[canonicalText(si.Expr, jr.scope)]; ok && jr.partitioned != nil {
			// The PARTITION BY expression itself reads its key.
			idx := topology.PseudoColumns + k
			it.keyCol, it.e = jr.schema[idx].Name, expr.Column(idx, jr.schema[idx].Name, e.Type)
		}
		switch x := si.Expr.(type) {
		case *ast.ColumnRef:
			it.name = x.Name
			if e.Op == expr.OpColumn && e.Col >= topology.PseudoColumns && count[x.Name] > 1 {
				it.name = jr.scope.cols[e.Col].Qualifier + "_" + x.Name
			}
		case *ast.Dereference:
			it.name = names.field(x.Field)
		default:
			it.name = names.expression()
		}
		if si.Alias != "" {
			it.name, it.aliased = si.Alias, true
		}
		out = append(out, it)
	}
	return out, nil
}

const keyMissing = "Key missing from projection (ie, SELECT). See https://cnfl.io/2LV7ouS.\n"

// joinKeysFirst picks the key columns of a persistent join query's
// output and moves them to the front, with ksqlDB's rules: the first join
// column the projection selects keys the output (read from the joined
// row's key, which an outer join fills from either side); a synthetic key
// must be selected; a foreign-key join is keyed by the left table's key.
func joinKeysFirst(items []item, jr *joinRel, sink string, pos ast.Pos) ([]item, int, error) {
	byKey := map[string][]int{}
	for i, it := range items {
		if it.keyCol != "" {
			byKey[it.keyCol] = append(byKey[it.keyCol], i)
		}
	}
	var chosen []string // key columns, in key order
	switch {
	case jr.synthetic:
		if k := jr.synthName; len(byKey[k]) == 0 {
			return nil, 0, errorf(pos, "%sThe query used to build `%s` must include the join expression %s in its projection (eg, SELECT %s...).\n%s was added as a synthetic key column because the join criteria did not match any source column. This expression must be included in the projection and may be aliased.", keyMissing, sink, k, k, k)
		}
		chosen = []string{jr.synthName}
	case len(jr.foreign) > 0:
		var missing []string
		for _, f := range jr.foreign {
			if len(byKey[f.joined()]) == 0 {
				missing = append(missing, "`"+f.name+"`")
			}
			chosen = append(chosen, f.joined())
		}
		if len(missing) == 1 {
			return nil, 0, errorf(pos, "Primary key column missing in projection. For foreign-key table-table joins, the projection must include all primary key columns from the left input table (`%s`). Missing column: %s.", jr.foreign[0].alias, missing[0])
		}
		if len(missing) > 1 {
			return nil, 0, errorf(pos, "Primary key columns missing in projection. For foreign-key table-table joins, the projection must include all primary key columns from the left input table (`%s`). Missing columns: %s.", jr.foreign[0].alias, strings.Join(missing, ", "))
		}
	default:
		for _, v := range jr.viable {
			if len(byKey[v.joined()]) > 0 {
				chosen = []string{v.joined()}
				break
			}
		}
		if chosen == nil {
			texts := make([]string, len(jr.viable))
			for i, v := range jr.viable {
				texts[i] = v.text()
			}
			what := "join expression"
			if len(texts) > 1 {
				what += "s"
			}
			return nil, 0, errorf(pos, "%sThe query used to build `%s` must include the %s %s in its projection (eg, SELECT %s...).", keyMissing, sink, what, strings.Join(texts, " or "), texts[0])
		}
	}
	isKey := map[int]bool{}
	var keys []item
	for n, k := range chosen {
		at := byKey[k]
		if len(at) > 1 {
			names := []string{items[at[0]].name, items[at[1]].name}
			slices.Sort(names)
			return nil, 0, errorf(items[at[1]].pos, "The projection contains a key column (`%s`) more than once, aliased as: %s and %s.", k, names[0], names[1])
		}
		it := items[at[0]]
		// The key reads the joined row's key column.
		at0 := topology.PseudoColumns + n
		it.e = expr.Column(at0, jr.schema[at0].Name, it.e.Type)
		keys = append(keys, it)
		isKey[at[0]] = true
	}
	var values []item
	for i, it := range items {
		if !isKey[i] {
			it.keyCol = ""
			values = append(values, it)
		}
	}
	if len(values) == 0 {
		return nil, 0, &Error{Pos: pos, Msg: "The projection contains no value columns. Select at least one column that is not a key."}
	}
	return append(keys, values...), len(keys), nil
}

// syntheticKey names the key of a join on expressions or a FULL OUTER
// join: ROWKEY, or ROWKEY_n for the smallest n no input's column uses.
func syntheticKey(inputs []joinInput) string {
	taken := func(n string) bool {
		for _, in := range inputs {
			for _, c := range in.src.Columns() {
				if c.Name == n {
					return true
				}
			}
		}
		return false
	}
	if !taken("ROWKEY") {
		return "ROWKEY"
	}
	for i := 1; ; i++ {
		if n := fmt.Sprintf("ROWKEY_%d", i); !taken(n) {
			return n
		}
	}
}

// checkWindowsMatch applies ksqlDB's rules to the windowing of the sides
// of a join: both sides windowed or neither, by windows of the same kind.
func checkWindowsMatch(j *ast.Join, leftName string, lw *topology.KeyWindow, rin joinInput) error {
	rw := rin.src.Window
	desc := func(name string, w *topology.KeyWindow) string {
		if w == nil {
			return fmt.Sprintf("`%s` is not windowed", name)
		}
		return fmt.Sprintf("`%s` is %s windowed", name, w.Type)
	}
	switch {
	case lw == nil && rw == nil:
		return nil
	case lw == nil || rw == nil:
		return errorf(j.Pos, "Can not join windowed source to non-windowed source.\n%s\n%s", desc(leftName, lw), desc(rin.alias, rw))
	case (lw.Type == topology.Session) != (rw.Type == topology.Session):
		return errorf(j.Pos, "Incompatible windowed sources.\nLeft source: %s\nRight source: %s\nSession windowed sources can only be joined to other session windowed sources, and may still not result in expected behaviour as session bounds must be an exact match for the join to work\nHopping and tumbling windowed sources can only be joined to other hopping and tumbling windowed sources", lw.Type, rw.Type)
	}
	return nil
}

// checkWindows refuses a join of windowed sources (whose windows match,
// checkWindowsMatch) that are not both keyed by the join expressions with
// the same windows, since windowed rows cannot be repartitioned.
//
// forced says which sides are repartitioned only to write their keys
// again in a schema-registry format: a windowed stream keyed by the join
// expression may be, which writes its rows' windows with the join's key
// (a time window as its start, so that time windows of other sizes can
// match); a windowed table cannot.
func checkWindows(j *ast.Join, lw *topology.KeyWindow, rin joinInput, keyed, leftTable bool, forced [2]bool) error {
	rw := rin.src.Window
	if lw == nil || rw == nil {
		return nil
	}
	const msg = "Implicit repartitioning of windowed sources is not supported. See https://github.com/confluentinc/ksql/issues/4385."
	switch {
	case !keyed:
		return errorf(j.On.Position(), msg)
	case forced[0] && leftTable || forced[1] && rin.src.Kind == catalog.Table:
		return errorf(j.On.Position(), msg+" As a result, ksqlDB does not support joins on windowed sources with Schema-Registry-enabled key formats (AVRO, JSON_SR, PROTOBUF) at this time. Please repartition your sources to use a different key format before performing the join.")
	case *lw != *rw && !forced[0] && !forced[1]:
		return errorf(j.On.Position(), msg)
	}
	return nil
}

// canonicalText prints e with every column qualified by the source it
// resolves to in sc, so that L.A and A compare equal when A is L's.
func canonicalText(e ast.Expr, sc joinScope) string {
	if e == nil {
		return ""
	}
	quals := map[*ast.ColumnRef]string{}
	ast.Walk(e, func(n ast.Expr) bool {
		if c, ok := n.(*ast.ColumnRef); ok {
			if idx, _, ok := sc.Resolve(c.Qualifier, c.Name); ok {
				quals[c] = sc.cols[idx].Qualifier
			}
		}
		return true
	})
	return exprQualified(e, quals)
}

// joinPartitionBy plans PARTITION BY over joined rows: a Rekey and a
// Repartition whose rows are the pseudo-columns, the new key columns, then
// each input's columns as ksqlDB lays out a repartitioned join (its value
// columns, its pseudo-columns, its key columns), without the columns that
// became keys. It returns the relation the key rules read, the joined
// relation over the new rows and the steps.
func joinPartitionBy(cat *catalog.Catalog, list []ast.Expr, jr *joinRel, aliases []string, opts QueryOptions) (relation, *joinRel, []topology.Step, error) {
	out := relation{keyExpr: map[string]string{}, keyMsg: map[string]string{}, keyPos: map[string]ast.Pos{}}
	rekey := topology.Step{Kind: topology.Rekey}
	var scope bind.ColumnScope
	var names []string
	add := func(e *expr.Expr, c types.Column, sc bind.ScopeColumn, name string) {
		rekey.Exprs = append(rekey.Exprs, e)
		rekey.Schema = append(rekey.Schema, c)
		scope = append(scope, sc)
		names = append(names, name)
	}
	for i := 0; i < topology.PseudoColumns; i++ {
		add(expr.Column(i, jr.schema[i].Name, jr.schema[i].Type), jr.schema[i], jr.scope.cols[i], "")
	}
	moved := map[int]bool{}
	generated := 0
	for _, pe := range list {
		if lit, ok := pe.(*ast.Literal); ok && lit.Kind == ast.NullLit {
			if len(list) > 1 {
				return relation{}, nil, nil, errorf(pe.Position(), "Cannot PARTITION BY multiple columns including NULL. Partition by NULL alone to drop the key.")
			}
			continue
		}
		if cr, ok := pe.(*ast.ColumnRef); ok {
			if _, _, found := jr.scope.Resolve(cr.Qualifier, cr.Name); !found && jr.scope.Explain(cr.Qualifier, cr.Name) == nil {
				return relation{}, nil, nil, errorf(pe.Position(), "PARTITION BY column '%s' cannot be resolved. '%s' must be a column in the source schema since PARTITION BY is applied on the input.", cr.Name, cr.Name)
			}
		}
		e, err := bindJoined(cat, "PARTITION BY", pe, jr.scope, aliases)
		if err != nil {
			return relation{}, nil, nil, err
		}
		var name string
		keyScope := bind.ScopeColumn{Type: e.Type}
		switch x := pe.(type) {
		case *ast.ColumnRef:
			name = x.Name
			if e.Op == expr.OpColumn && jr.scope.names[e.Col] != "" {
				// The column moves to the key, where it keeps its name.
				name = jr.scope.names[e.Col]
				keyScope = jr.scope.cols[e.Col]
				moved[e.Col] = true
			}
		case *ast.Dereference:
			name = x.Field
		default:
			name = fmt.Sprintf("KSQL_COL_%d", generated)
			generated++
		}
		for _, k := range out.keys {
			if k.Name == name {
				return relation{}, nil, nil, errorf(pe.Position(), "PARTITION BY names the column %s twice", name)
			}
		}
		c := types.Column{Name: name, Type: e.Type}
		add(e, c, keyScope, name)
		out.keys = append(out.keys, c)
		out.keyExpr[name] = canonicalText(pe, jr.scope)
		out.keyMsg[name] = out.keyExpr[name]
		out.keyPos[name] = pe.Position()
	}
	rekey.Keys = len(out.keys)
	// Each input's columns: values, pseudo-columns, keys.
	for _, in := range jr.inputs {
		isKey := func(name string) bool {
			return slices.ContainsFunc(in.src.Key, func(c types.Column) bool { return c.Name == name })
		}
		isPseudo := func(name string) bool {
			return name == topology.RowTime || name == topology.RowPartition || name == topology.RowOffset
		}
		for pass := 0; pass < 3; pass++ {
			for idx, sc := range jr.scope.cols {
				if idx < topology.PseudoColumns || sc.Qualifier != in.alias || moved[idx] {
					continue
				}
				var want bool
				switch pass {
				case 0:
					want = !isKey(sc.Name) && !isPseudo(sc.Name)
				case 1:
					want = isPseudo(sc.Name)
				default:
					want = isKey(sc.Name)
				}
				if want {
					c := jr.schema[idx]
					add(expr.Column(idx, c.Name, c.Type), c, sc, jr.scope.names[idx])
				}
			}
		}
	}
	for i, sc := range scope {
		if i >= topology.PseudoColumns+rekey.Keys && names[i] == "" && sc.Qualifier != "" {
			// A side's pseudo-column copy is selected by a star here.
			names[i] = sc.Qualifier + "_" + sc.Name
		}
	}
	steps := []topology.Step{rekey}
	if jr.partitions > 1 && len(out.keys) > 0 {
		rep := topology.Step{Kind: topology.Repartition, Schema: rekey.Schema, Keys: rekey.Keys, Partitions: jr.partitions}
		if opts.QueryID != "" {
			rep.Topic = opts.InternalPrefix + opts.QueryID + "-repartition"
		}
		steps = append(steps, rep)
	}
	pjr := &joinRel{g: jr.g, inputs: jr.inputs, schema: rekey.Schema, scope: joinScope{cols: scope, names: names}, keys: rekey.Keys, partitions: jr.partitions, partitioned: map[string]int{}}
	for k, key := range out.keys {
		pjr.partitioned[out.keyExpr[key.Name]] = k
	}
	out.scope = scope
	return out, pjr, steps, nil
}

// joinAggNames names the columns an aggregation over joined rows selects
// as a join's projection names them: a column that several inputs have
// is prefixed by its source (L_A).
func joinAggNames(items []item, list []ast.SelectItem, jr *joinRel) {
	if len(items) != len(list) {
		return // a star expanded: leave the names
	}
	count := map[string]int{}
	for _, in := range jr.inputs {
		for _, c := range in.src.Columns() {
			count[c.Name]++
		}
	}
	for i, si := range list {
		cr, ok := si.Expr.(*ast.ColumnRef)
		if !ok || si.Alias != "" || si.Star || si.StructStar {
			continue
		}
		if count[cr.Name] > 1 {
			if idx, _, ok := jr.scope.Resolve(cr.Qualifier, cr.Name); ok && jr.scope.names[idx] != "" {
				items[i].name = jr.scope.names[idx]
			}
		}
	}
}
