import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What wakes a screen's loop up.
enum TerminalInput: Sendable {
    /// Keys read in one batch (a paste is one batch).
    case keys([Key])
    /// The terminal changed size.
    case resize
    /// SIGINT, SIGTERM or SIGHUP: leave cleanly.
    case interrupted
    /// The input closed or failed.
    case inputClosed
    /// Something the screen watches changed; redraw.
    case changed
}

/// The keys and signals of one full-screen loop, merged into one stream.
///
/// Ownership: created and stopped by the screen that runs the loop, on its actor. The key reader
/// runs on a thread of its own and the signal handlers on a global queue; both only yield into
/// ``stream``, whose continuation is the one thing shared across threads.
///
/// While it runs, the stop signals are ignored by the process, so that their default action
/// (dying with the terminal still raw) never happens; ``stop()`` puts the defaults back.
final class TerminalInputs {
    /// Every input, in the order it came.
    let stream: AsyncStream<TerminalInput>
    /// Yields into ``stream`` from anywhere.
    let continuation: AsyncStream<TerminalInput>.Continuation
    private let reader: KeyReader
    private var signals: [any DispatchSourceSignal] = []

    /// Starts reading `terminal`'s keys and watching the signals.
    init(terminal: Terminal) {
        (stream, continuation) = AsyncStream.makeStream(of: TerminalInput.self)
        reader = KeyReader(input: terminal.input)
        let continuation = continuation
        reader.start(onKeys: { continuation.yield(.keys($0)) }, onEnd: { continuation.yield(.inputClosed) })
        signals = Self.watchSignals { continuation.yield($0) }
    }

    /// Stops the reader (no key is read after this returns) and gives the signals back their
    /// default actions.
    func stop() {
        reader.stop()
        for source in signals { source.cancel() }
        for number in [SIGINT, SIGTERM, SIGHUP] { signal(number, SIG_DFL) }
        continuation.finish()
    }

    /// SIGWINCH becomes a redraw, the stop signals a clean quit. Static and nonisolated so that
    /// the handlers (on a global queue) capture nothing but `send`.
    private static func watchSignals(_ send: @escaping @Sendable (TerminalInput) -> Void) -> [any DispatchSourceSignal] {
        let watched: [(Int32, TerminalInput)] = [(SIGWINCH, .resize), (SIGINT, .interrupted), (SIGTERM, .interrupted), (SIGHUP, .interrupted)]
        return watched.map { number, input in
            if number != SIGWINCH { signal(number, SIG_IGN) }
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { send(input) }
            source.resume()
            return source
        }
    }
}
