package planner

import "context"

// cancelled returns why planning stops once ctx has ended (its cause: the
// client went away, or the server's statement timeout passed), and nil
// while it runs. A nil ctx never ends. Planning checks it between its
// phases, so that a statement whose client is gone stops planning.
func cancelled(ctx context.Context) error {
	if ctx == nil || ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}
