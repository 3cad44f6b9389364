/// A destination a passenger can pick, as `GET /places?q=…` returns it.
///
/// `{"id": "gare-du-nord", "name": "Gare du Nord", "area": "Paris 10e"}`
public struct Place: Codable, Sendable, Hashable, Identifiable {
    /// A stable identifier (a slug of the name).
    public var id: String
    /// What the passenger reads and searches.
    public var name: String
    /// The district, shown under the name so that two similar names can be told apart.
    public var area: String

    /// A place from its parts.
    public init(id: String, name: String, area: String) {
        self.id = id
        self.name = name
        self.area = area
    }
}
