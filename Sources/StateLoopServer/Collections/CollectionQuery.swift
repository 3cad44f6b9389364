import StateLoopWire

/// A query clients may subscribe to, declared by the app for one collection: its name, and how
/// a principal's request with its parameters becomes a `RowQuery` — or `nil` when the
/// principal may not subscribe to it (answered 404, as a query that does not exist).
///
/// ```swift
/// CollectionQuery<User>("byProject") { transaction, user, parameters in
///     let project = try parameters.text("projectID")
///     guard try transaction.read(memberships, "\(project)/\(user.id)") != nil else { return nil }
///     return RowQuery(where: [.init("projectID", equals: .text(project))], orderedBy: [.init("position")])
/// }
/// ```
///
/// The body runs in the read transaction that answers the subscription, so what it reads (a
/// membership, say) and the rows it selects are one consistent view. It runs again at every
/// subscription and every catch-up, so a principal who lost access is refused from then on,
/// whatever cookie it holds.
public struct CollectionQuery<Principal: Sendable>: Sendable {
    /// The query's name: the last step of its path (`GET <collection path>/<name>`), 1 to 64
    /// letters, digits, `-`, `_` or `.`.
    public let name: String
    /// The resources and collections the body reads to decide (the projects' members, say): a
    /// commit that writes one of them has the query made again for every socket that follows it.
    public let dependencies: Set<String>
    let resolve: @Sendable (ServerTransaction, Principal, QueryParameters) throws -> RowQuery?

    /// Declares a query.
    ///
    /// - Parameters:
    ///   - name: Its name, the last step of its path.
    ///   - dependencies: The names of the resources and collections `resolve` reads. A push
    ///     socket's query is made again after every commit that writes one of them: refused
    ///     then, the socket is sent an empty result and closed; made otherwise, it is sent its new
    ///     whole result. A resource `resolve` reads but that is not listed here changes what a
    ///     new subscription gets, not what a socket already open is sent.
    ///   - resolve: Makes the query for a principal and the request's parameters, or returns
    ///     `nil` to refuse. Throw an ``ErrorResponse`` (as ``QueryParameters/text(_:)`` does) for
    ///     parameters that make no query.
    public init(
        _ name: String, dependsOn dependencies: Set<String> = [],
        _ resolve: @escaping @Sendable (ServerTransaction, Principal, QueryParameters) throws -> RowQuery?
    ) {
        precondition(
            RowSQL.isCollectionName(name), "CollectionQuery(\"\(name)\"): a query's name is 1 to 64 letters, digits, '-', '_' or '.'; rename it")
        self.name = name
        self.dependencies = dependencies
        self.resolve = resolve
    }
}

/// The parameters of a subscription's request: its URL's query items, but for the kit's own
/// (`cookie`, `clientID`).
public struct QueryParameters: Sendable {
    let items: [String: String]

    /// Parameters from their names and values.
    public init(_ items: [String: String]) {
        self.items = items
    }

    /// The parameter `name`, if the request has it.
    public subscript(name: String) -> String? {
        items[name]
    }

    /// The parameter `name`, which the query needs.
    ///
    /// - Throws: ``ErrorResponse`` 400 `missingParameter` when the request lacks it.
    public func text(_ name: String) throws(ErrorResponse) -> String {
        guard let value = items[name] else {
            throw ErrorResponse(.badRequest, "missingParameter", "this query needs the parameter \(name)")
        }
        return value
    }

    /// The parameter `name` as a whole number.
    ///
    /// - Throws: ``ErrorResponse`` 400 `missingParameter` or `invalidParameter`.
    public func integer(_ name: String) throws(ErrorResponse) -> Int64 {
        guard let value = Int64(try text(name)) else {
            throw ErrorResponse(.badRequest, "invalidParameter", "the parameter \(name) is a whole number")
        }
        return value
    }
}
