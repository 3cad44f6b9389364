/// Runs `body` isolated to `actor`: how the handles an inspector keeps (previews, skips,
/// dispatches) reach a system's actor from any isolation.
func run<Result: Sendable>(on actor: isolated any Actor, _ body: @Sendable () -> Result) -> Result {
    body()
}
