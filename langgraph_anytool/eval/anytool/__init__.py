"""AnyTool / ToolBench evaluation: batch runner, pass rate, stats, format conversion, results, checkpoint persistence, remote solvers."""
