import Hummingbird
import StateLoopServer
import Synchronization

/// The tests' app: each user has a list of notes; everyone shares a board counter. Tokens are
/// `t-<user>`; a user reads and writes their own notes, everyone reads and writes the board,
/// and "eve" may read nothing.
public enum Notes {
    public static let notes = ServerResource("notes", of: [String].self)
    public static let board = ServerResource("board", of: Int.self)
    /// A large shared value, for slow readers.
    public static let pages = ServerResource("pages", of: String.self)

    /// Users whose read access is taken away (by a test), effective at once.
    public static let banned = Mutex<Set<String>>([])

    /// Users whose session ends after this many more lookups of their principal (by a test):
    /// a sign-out at a chosen point of a request's handling.
    public static let sessionLookupsLeft = Mutex<[String: Int]>([:])

    /// Runs (by a test) when a lookup finds such a session ended, before it answers: a change
    /// made at that very moment.
    public static let sessionEnded = Mutex<(@Sendable (String) async -> Void)?>(nil)

    public struct Rules: AccessPolicy {
        public init() {}

        public func principal(for request: Request) async throws -> String? {
            guard let token = request.bearerToken, token.hasPrefix("t-") else { return nil }
            let user = String(token.dropFirst("t-".count))
            let signedIn = sessionLookupsLeft.withLock { left in
                guard let count = left[user] else { return true }
                left[user] = max(0, count - 1)
                return count > 0
            }
            if !signedIn, let hook = sessionEnded.withLock({ $0 }) { await hook(user) }
            return signedIn ? user : nil
        }
        public func id(of user: String) -> String { user }
        public func mayRead(_ key: ResourceKey, as user: String) -> Bool {
            user != "eve" && !banned.withLock { $0.contains(user) } && (key.resource != "notes" || key.id == user)
        }
        public func mayWrite(_ key: ResourceKey, as user: String) -> Bool {
            key.resource == "board" || key.id == user
        }
    }

    public struct NewNote: Codable, Sendable {
        public var text: String
        public init(text: String) { self.text = text }
    }

    public struct BoardChange: Codable, Sendable {
        public var add: Int
        public init(add: Int) { self.add = add }
    }

    /// Counts note handler runs per user, to tell a remembered answer from a second run.
    public static let runs = Mutex<[String: Int]>([:])

    public static func declare(on server: SyncServer<Rules>) {
        server.serve(notes, at: "me/notes") { user, _ in user }
        server.serve(notes, at: "users/:user/notes") { _, parameters in parameters.get("user") }
        server.serve(board, at: "board") { _, _ in "main" }
        server.serve(pages, at: "pages") { _, _ in "main" }
        server.mutation(at: "me/notes", body: NewNote.self, changes: notes, key: { user, _ in user }) { transaction, user, note in
            runs.withLock { $0[user, default: 0] += 1 }
            guard !note.text.isEmpty else { throw MutationRefusal("emptyNote", "a note needs some text") }
            var list = try transaction.read(notes, user) ?? []
            list.append(note.text)
            try transaction.write(list, to: notes, user)
        }
        // Writes someone else's notes: refused by the access rules for anyone but that user.
        server.mutation(at: "users/:user/notes", body: NewNote.self, changes: notes, key: { user, _ in user }) { transaction, _, note in
            try transaction.write([note.text], to: notes, "ann")
        }
        // A handler with a bug: it throws something that is not a refusal.
        server.mutation(at: "me/broken", body: NewNote.self, changes: notes, key: { user, _ in user }) { _, _, _ in
            struct Bug: Error {}
            throw Bug()
        }
        server.mutation(at: "board", body: BoardChange.self, changes: board, key: { _, _ in "main" }) { transaction, _, change in
            try transaction.write((try transaction.read(board, "main") ?? 0) + change.add, to: board, "main")
        }
    }
}
