package host

import "context"

// Values of Config.DescribeTools.
const (
	DescribeNone       = "none"
	DescribeSignatures = "signatures"
)

// DescribeToolsBudget is how many tokens (estimated as a quarter of the
// length) the signatures of describe_tools = "signatures" may take; the
// tools past it are left out, with a line that says how many and that
// sbx.search finds them.
const DescribeToolsBudget = 2000

// ToolSignatures returns the compact Python signatures of the tools the
// sandbox may call, grouped by namespace (see Config.DescribeTools), or ""
// unless DescribeTools is "signatures".
func (s *Sandbox) ToolSignatures(ctx context.Context) string {
	if s.cfg.DescribeTools != DescribeSignatures || s.router == nil {
		return ""
	}
	return s.router.Signatures(ctx, DescribeToolsBudget)
}
