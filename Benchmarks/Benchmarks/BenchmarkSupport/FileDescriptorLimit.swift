#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Raises this process's limit of open files to the hard limit the system allows it, for the
/// benchmarks that hold thousands of sockets; the system's settings stay as they are. Returns
/// the limit now in force.
@discardableResult
public func raiseFileDescriptorLimit() -> Int {
    var limit = rlimit()
    #if os(Linux)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        let resource = RLIMIT_NOFILE
    #endif
    guard getrlimit(resource, &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        if setrlimit(resource, &raised) == 0 { limit = raised }
    }
    return Int(limit.rlim_cur)
}
