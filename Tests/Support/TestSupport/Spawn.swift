import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a command could not be run.
public struct SpawnFailure: Error, CustomStringConvertible {
    public let description: String
}

/// Runs `arguments` (found on the PATH) with no signal blocked or ignored, no descriptor of
/// the test's but the three standard ones, standard output to the file at `output` (standard
/// error too when `includingErrors`, else nowhere); its exit status. It blocks until the
/// command ends: call it off the cooperative pool.
public func spawnAndWait(_ arguments: [String], output: String, includingErrors: Bool = false) throws -> Int32 {
    #if canImport(Darwin)
        var attributes: posix_spawnattr_t?
        var actions: posix_spawn_file_actions_t?
    #else
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
    #endif
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    var allSignals = sigset_t()
    sigfillset(&allSignals)
    posix_spawnattr_setsigdefault(&attributes, &allSignals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    if includingErrors {
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
    } else {
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }
    // Nothing else of the test process: a server the command starts (a tmux server, a
    // PostgreSQL server) outlives it, and a listening socket it inherited would keep a test
    // server's port after the test closed it (a new bind fails, connections queue on a dead
    // listener), as an inherited pipe would keep another child's output from ending.
    #if canImport(Darwin)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_CLOEXEC_DEFAULT))
    #else
        // glibc 2.34 and later; Swift's Glibc module does not declare it.
        typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
    #endif

    let argv = arguments.map { strdup($0) } + [nil]
    let envp = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for pointer in argv + envp { free(pointer) } }
    var pid = pid_t()
    let spawned = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
    guard spawned == 0 else {
        throw SpawnFailure(description: "cannot start \(arguments[0]): error \(spawned)")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw SpawnFailure(description: "waitpid failed: error \(errno)") }
    }
    // Exited normally: the exit code; killed: 128 plus the signal, as a shell reports it.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
}
