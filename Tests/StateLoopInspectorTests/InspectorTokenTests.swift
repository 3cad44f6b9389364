import Foundation
import StateLoopInspectorServer
import Testing

/// `InspectorToken`: a restarted inspector keeps its token, in a file only its owner reads.
@Suite("inspector: the kept token")
struct InspectorTokenTests {
    private func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-token-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("the first start makes the token, readable by its owner only; every later start reads the same; renew replaces it")
    func keptAcrossStarts() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("deeper/inspector-token")
        let first = try InspectorToken.stored(in: file)
        #expect(first.count == 64)
        #expect(try InspectorToken.stored(in: file) == first, "a restarted inspector has the token its apps and pages hold")
        let permissions = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(permissions?.intValue == 0o600)
        let renewed = try InspectorToken.stored(in: file, renew: true)
        #expect(renewed != first && renewed.count == 64)
        #expect(try InspectorToken.stored(in: file) == renewed)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path)
        #expect(leftovers == ["inspector-token"], "no draft left behind: \(leftovers)")
    }

    @Test("a file that holds no token (empty, or text a URL would need escaped) gets a new one; one written by hand is kept")
    func replacesWhatIsNoToken() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("inspector-token")
        for content in ["", "\n", "two words", "tok&en", String(repeating: "a", count: 300)] {
            try Data(content.utf8).write(to: file)
            let token = try InspectorToken.stored(in: file)
            #expect(token.count == 64 && token != content, "\(content.prefix(20))")
        }
        try Data("my-own.token_1\n".utf8).write(to: file)
        #expect(try InspectorToken.stored(in: file) == "my-own.token_1")
    }

    @Test("inspectors started at once for the first time all take the one token kept")
    func firstStartsAtOnce() async throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("inspector-token")
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<16 { group.addTask { try InspectorToken.stored(in: file) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(tokens.count == 1, "\(tokens)")
        #expect(try InspectorToken.stored(in: file) == tokens.first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["inspector-token"], "no draft left behind")
    }

    @Test("the default file follows the platform's data folder")
    func defaultFile() {
        #if !canImport(Darwin)
            #expect(InspectorToken.defaultFile(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]).path == "/data/stateloop/inspector-token")
            #expect(
                InspectorToken.defaultFile(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/u"]).path
                    == "/home/u/.local/share/stateloop/inspector-token")
        #endif
    }
}
