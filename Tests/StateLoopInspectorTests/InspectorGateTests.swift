import Foundation
import StateLoopInspectorServer
import Testing

/// What the inspector refuses before anything reaches a session, asked over a plain socket so
/// that every header is the test's own: refused upgrades answered with their status, `Host` and
/// `Origin` checked, and the page's Content-Security-Policy.
@Suite("inspector: the gate", .timeLimit(.minutes(4)))
struct InspectorGateTests {
    @Test("a WebSocket upgrade without the token, or with a wrong one, is answered 401 with the reason, on both sockets")
    func refusedUpgradeIs401() async throws {
        try await withInspectorServer { server in
            let port = try #require(server.port)
            let token = server.configuration.token
            for path in ["/app", "/page", "/app?token=wrong", "/page?token=\(token)x"] {
                let answer = try await RawHTTP.upgrade(port: port, path)
                #expect(answer.status == 401, "\(path): \(answer)")
                #expect(answer.body.contains("token"), "\(path): \(answer)")
            }
            let bearer = try await RawHTTP.upgrade(port: port, "/app", headers: ["Authorization": "Bearer nope"])
            #expect(bearer.status == 401, "\(bearer)")
            // The token still opens both.
            #expect(try await RawHTTP.upgrade(port: port, "/page?token=\(token)").status == 101)
            #expect(try await RawHTTP.upgrade(port: port, "/app", headers: ["Authorization": "Bearer \(token)"]).status == 101)
        }
    }

    @Test("a Host other than the inspector's loopback address and port is refused with 421, token or not, upgrade or not")
    func hostChecked() async throws {
        try await withInspectorServer { server in
            let port = try #require(server.port)
            let token = server.configuration.token
            // A rebound name, another port, none at all.
            for host in [
                "attacker.example:\(port)", "attacker.example", "127.0.0.1:\(port + 1)", "127.0.0.1", "localhost.attacker.example:\(port)", nil,
            ] {
                for path in ["/?token=\(token)", "/apps?token=\(token)", "/inspector.js"] {
                    let answer = try await RawHTTP.get(port: port, path, headers: ["Host": host])
                    #expect(answer.status == 421, "\(host ?? "no Host") \(path): \(answer)")
                }
                for path in ["/page?token=\(token)", "/app?token=\(token)"] {
                    let answer = try await RawHTTP.upgrade(port: port, path, headers: ["Host": host])
                    #expect(answer.status == 421, "\(host ?? "no Host") upgrade \(path): \(answer)")
                }
            }
            // Each loopback name of the bound port is the inspector.
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST:\(port)", "[::1]:\(port)"] {
                #expect(try await RawHTTP.get(port: port, "/?token=\(token)", headers: ["Host": host]).status == 200, "\(host)")
                #expect(try await RawHTTP.upgrade(port: port, "/page?token=\(token)", headers: ["Host": host]).status == 101, "\(host)")
            }
        }
    }

    @Test("a browser request from another page (Origin) is refused with 403; the inspector's own page, and apps, are not")
    func originChecked() async throws {
        try await withInspectorServer { server in
            let port = try #require(server.port)
            let token = server.configuration.token
            for origin in ["http://attacker.example", "http://127.0.0.1:\(port + 1)", "https://127.0.0.1:\(port)", "null", "http://127.0.0.1"] {
                let page = try await RawHTTP.get(port: port, "/?token=\(token)", headers: ["Origin": origin])
                #expect(page.status == 403, "\(origin) page: \(page)")
                let list = try await RawHTTP.get(port: port, "/apps?token=\(token)", headers: ["Origin": origin])
                #expect(list.status == 403, "\(origin) apps: \(list)")
                for path in ["/page", "/app"] {
                    let socket = try await RawHTTP.upgrade(port: port, "\(path)?token=\(token)", headers: ["Origin": origin])
                    #expect(socket.status == 403, "\(origin) \(path): \(socket)")
                }
            }
            for origin in ["http://127.0.0.1:\(port)", "http://localhost:\(port)"] {
                #expect(try await RawHTTP.upgrade(port: port, "/page?token=\(token)", headers: ["Origin": origin]).status == 101, "\(origin)")
                #expect(try await RawHTTP.get(port: port, "/?token=\(token)", headers: ["Origin": origin]).status == 200, "\(origin)")
            }
            // Swift clients of the sockets send no Origin, or swift-websocket's `ws://host`, which
            // no browser sends; a browser extension's page is still a foreign page.
            for path in ["/app", "/page"] {
                #expect(try await RawHTTP.upgrade(port: port, "\(path)?token=\(token)").status == 101, "\(path)")
                #expect(
                    try await RawHTTP.upgrade(port: port, "\(path)?token=\(token)", headers: ["Origin": "ws://127.0.0.1"]).status == 101, "\(path)")
                #expect(
                    try await RawHTTP.upgrade(port: port, "\(path)?token=\(token)", headers: ["Origin": "chrome-extension://abcdef"]).status == 403,
                    "\(path)")
            }
            #expect(try await RawHTTP.get(port: port, "/apps?token=\(token)", headers: ["Origin": "ws://127.0.0.1"]).status == 403)
        }
    }

    @Test("the page is served with a strict Content-Security-Policy and nosniff, and holds nothing inline that the policy would block")
    func contentSecurityPolicy() async throws {
        try await withInspectorServer { server in
            let port = try #require(server.port)
            let token = server.configuration.token
            for host in ["127.0.0.1:\(port)", "localhost:\(port)"] {
                let page = try await RawHTTP.get(port: port, "/?token=\(token)", headers: ["Host": host])
                #expect(page.status == 200)
                let policy = try #require(page.headers["content-security-policy"], "\(page.headers)")
                let directives = Set(policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) })
                for directive in [
                    "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self' ws://\(host)",
                    "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'",
                ] {
                    #expect(directives.contains(directive), "\(directive) not in \(policy)")
                }
                #expect(!policy.contains("unsafe"), "\(policy)")
                #expect(page.headers["x-content-type-options"] == "nosniff")
                for file in ["/inspector.js", "/inspector.css"] {
                    #expect(try await RawHTTP.get(port: port, file).headers["x-content-type-options"] == "nosniff", "\(file)")
                }
                // Under that policy, an inline script, style or handler would not run.
                let html = page.body.lowercased()
                let scripts = html.components(separatedBy: "<script").dropFirst()
                #expect(scripts.allSatisfy { $0.prefix(while: { $0 != ">" }).contains("src=") }, "an inline script")
                #expect(!html.contains("<style"), "an inline style sheet")
                #expect(html.range(of: #"\sstyle\s*="#, options: .regularExpression) == nil, "an inline style attribute")
                #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "an inline event handler")
                #expect(!html.contains("javascript:"), "a javascript: address")
            }
        }
    }
}
