import Foundation

/// With `NIGHTRIDE_PROFILE_PID_FILE` set, writes `processIdentifier` (the process to profile)
/// there and gives a profiler 3 s to attach before the rounds (see docs/Benchmarks.md); does
/// nothing otherwise.
public func waitForProfiler(toProfile processIdentifier: Int32) async throws {
    guard let path = ProcessInfo.processInfo.environment["NIGHTRIDE_PROFILE_PID_FILE"] else { return }
    try "\(processIdentifier)\n".write(toFile: path, atomically: true, encoding: .utf8)
    try await Task.sleep(for: .seconds(3))
}
