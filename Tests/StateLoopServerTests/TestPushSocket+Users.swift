import StateLoopServerTesting

extension TestPushSocket {
    /// Connects to `path` on the test server as `user` (the test apps' token `t-<user>`; none
    /// when `nil`), or with `token` when given, with an optional client id; sends `send` once
    /// connected, if given.
    convenience init(port: Int, path: String, as user: String?, token: String? = nil, clientID: String? = nil, send: String? = nil) {
        let bearer = token ?? user.map { "t-\($0)" }
        let query = clientID.map { "?clientID=\($0)" } ?? ""
        self.init(port: port, path: path + query, headers: bearer.map { ["Authorization": "Bearer \($0)"] } ?? [:], send: send)
    }
}
